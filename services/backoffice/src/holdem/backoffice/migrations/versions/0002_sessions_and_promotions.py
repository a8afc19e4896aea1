"""Issue 29: server-side web sessions (revocable), disabled users, the campaign of a money
movement, and the player events the promotions and protection pages read."""

from alembic import op

revision = "0002"
down_revision = "0001"

SCHEMA = """
ALTER TABLE users ADD COLUMN disabled boolean NOT NULL DEFAULT false;
CREATE TABLE web_sessions (
    token_hash text PRIMARY KEY,             -- sha256 of the cookie's random token
    username text NOT NULL REFERENCES users ON UPDATE CASCADE ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,         -- renewed by each request, never past ends_at
    ends_at timestamptz NOT NULL             -- the absolute end of the session
);
CREATE INDEX web_sessions_by_user ON web_sessions (username);
CREATE INDEX web_sessions_by_end ON web_sessions (ends_at);
ALTER TABLE movements ADD COLUMN campaign_id text;  -- the free-hand campaign or promo credit's
CREATE TABLE player_events (                 -- campaigns, limits, blocks, reality checks
    operator_id text NOT NULL,
    event_id text NOT NULL,
    player_id text NOT NULL,
    type text NOT NULL,
    campaign_id text,
    detail jsonb NOT NULL,
    occurred_at timestamptz NOT NULL,
    PRIMARY KEY (operator_id, event_id)
);
CREATE INDEX player_events_by_player ON player_events (operator_id, player_id, occurred_at);
CREATE INDEX movements_by_kind ON movements (operator_id, kind, occurred_at);
-- Whose money a round's stakes were and what the player was paid (issue 29): a free hand's
-- ante and bonus are the promotion's (ADR 029), its call the player's; the wallet pays the
-- winnings of ante and bonus beyond their stakes and the whole return of the call.
CREATE VIEW round_money AS
SELECT r.operator_id, r.player_id, r.round_id, f.campaign_id,
    f.campaign_id IS NOT NULL AS free_hand,
    CASE WHEN f.campaign_id IS NULL THEN coalesce(r.total_bet, r.ante + r.aa_bonus)
         ELSE coalesce(r.call_amount, 0) END AS cash_stake,
    CASE WHEN f.campaign_id IS NULL THEN 0 ELSE r.ante + r.aa_bonus END AS promo_stake,
    b.paid AS cash_paid
FROM rounds r
LEFT JOIN LATERAL (
    SELECT m.campaign_id FROM movements m
    WHERE m.operator_id = r.operator_id AND m.player_id = r.player_id
      AND m.round_id = r.round_id AND m.kind = 'free_stake' LIMIT 1
) f ON true
LEFT JOIN LATERAL (
    SELECT sum(CASE WHEN f.campaign_id IS NOT NULL AND b.bet_type <> 'call'
                    THEN greatest(b.returned - b.stake, 0) ELSE b.returned END)::bigint AS paid
    FROM bets b
    WHERE b.operator_id = r.operator_id AND b.player_id = r.player_id
      AND b.round_id = r.round_id
) b ON true;
"""


def upgrade() -> None:
    op.execute(SCHEMA)


def downgrade() -> None:
    op.execute(
        "DROP VIEW round_money; DROP INDEX movements_by_kind; DROP TABLE player_events;"
        " ALTER TABLE movements DROP COLUMN campaign_id;"
        " DROP TABLE web_sessions; ALTER TABLE users DROP COLUMN disabled"
    )
