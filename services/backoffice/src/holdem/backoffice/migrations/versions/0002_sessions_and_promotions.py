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
"""


def upgrade() -> None:
    op.execute(SCHEMA)


def downgrade() -> None:
    op.execute(
        "DROP TABLE player_events; ALTER TABLE movements DROP COLUMN campaign_id;"
        " DROP TABLE web_sessions; ALTER TABLE users DROP COLUMN disabled"
    )
