"""The projection's tables: rounds, bets, money movements, sessions, tables, voids, tracking."""

from alembic import op

revision = "0001"
down_revision = None

SCHEMA = """
CREATE TABLE tracking (
    topic text NOT NULL,
    partition integer NOT NULL,
    next_offset bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (topic, partition)
);
CREATE TABLE rounds (
    operator_id text NOT NULL,
    player_id text NOT NULL,
    round_id text NOT NULL,
    brand text,
    status text NOT NULL,                    -- placed, dealt, decided, settled, voided
    currency text NOT NULL,
    mode text NOT NULL,
    table_id text,
    table_version integer,
    pay_table text,
    decision_timeout_s integer,
    timeout_policy text,
    session_id text,
    command_id text NOT NULL,
    ante bigint NOT NULL,
    aa_bonus bigint NOT NULL,
    call_hold bigint NOT NULL,
    requested_ante bigint NOT NULL,
    requested_aa_bonus bigint NOT NULL,
    adjusted boolean NOT NULL,
    bet_at timestamptz NOT NULL,
    dealt_at timestamptz,
    decided_at timestamptz,
    ended_at timestamptz,
    player_cards text[],
    flop text[],
    turn text,
    river text,
    dealer_cards text[],
    commitment text,
    deck text[],
    salt text,
    decision text,                           -- call, fold
    auto boolean,
    settled_event_id text,
    result text,                             -- win, lose, push, fold, voided
    dealer_qualifies boolean,
    player_category text,
    dealer_category text,
    bonus_category text,
    call_amount bigint,
    total_bet bigint,
    total_return bigint,
    void_reason text,
    PRIMARY KEY (operator_id, player_id, round_id)
);
CREATE INDEX rounds_by_time ON rounds (operator_id, bet_at);
CREATE INDEX rounds_by_player ON rounds (operator_id, player_id, bet_at);
CREATE INDEX rounds_by_id ON rounds (operator_id, round_id);
CREATE INDEX rounds_by_table ON rounds (operator_id, table_id, bet_at);
CREATE TABLE bets (
    operator_id text NOT NULL,
    player_id text NOT NULL,
    round_id text NOT NULL,
    bet_type text NOT NULL,                  -- ante, call, aa_bonus
    stake bigint NOT NULL,
    returned bigint NOT NULL,
    refunded boolean NOT NULL,
    PRIMARY KEY (operator_id, player_id, round_id, bet_type)
);
CREATE TABLE movements (
    operator_id text NOT NULL,
    player_id text NOT NULL,
    tx_id text NOT NULL,                     -- the wallet's idempotency key: applied once, ever
    kind text NOT NULL,
    event_id text NOT NULL,
    round_id text,
    brand text,
    currency text NOT NULL,
    mode text NOT NULL,
    amount bigint NOT NULL,
    available bigint NOT NULL,
    held bigint NOT NULL,
    occurred_at timestamptz NOT NULL,
    source text NOT NULL,                    -- topic[partition]@offset
    PRIMARY KEY (operator_id, player_id, tx_id)
);
CREATE INDEX movements_by_round ON movements (operator_id, player_id, round_id);
CREATE INDEX movements_by_time ON movements (operator_id, occurred_at);
CREATE TABLE sessions (
    operator_id text NOT NULL,
    player_id text NOT NULL,
    session_id text NOT NULL,
    table_id text NOT NULL,
    brand text,
    mode text NOT NULL,
    idle_timeout_s integer NOT NULL,
    first_round_id text NOT NULL,
    started_at timestamptz NOT NULL,
    ended_at timestamptz,
    end_reason text,
    PRIMARY KEY (operator_id, player_id, session_id)
);
CREATE TABLE table_versions (
    operator_id text NOT NULL,
    table_id text NOT NULL,
    table_version integer NOT NULL,
    event text NOT NULL,                     -- opened, changed, closed
    terms jsonb NOT NULL,
    occurred_at timestamptz NOT NULL,
    PRIMARY KEY (operator_id, table_id, table_version)
);
CREATE TABLE voids (
    operator_id text NOT NULL,
    player_id text NOT NULL,
    round_id text NOT NULL,
    malfunction_id text NOT NULL,
    reason text NOT NULL,
    voided_at timestamptz NOT NULL,
    PRIMARY KEY (operator_id, player_id, round_id)
);
CREATE TABLE malfunctions (
    operator_id text NOT NULL,
    event_id text NOT NULL,
    player_id text NOT NULL,
    round_id text NOT NULL,
    source text NOT NULL,
    reason text NOT NULL,
    refuses_settled boolean NOT NULL,
    occurred_at timestamptz NOT NULL,
    PRIMARY KEY (operator_id, event_id)
);
CREATE TABLE bet_rejections (
    operator_id text NOT NULL,
    event_id text NOT NULL,
    player_id text NOT NULL,
    round_id text NOT NULL,
    brand text,
    reason text NOT NULL,
    detail text NOT NULL,
    occurred_at timestamptz NOT NULL,
    PRIMARY KEY (operator_id, event_id)
);
CREATE TABLE seamless (
    operator_id text NOT NULL,
    player_id text NOT NULL,
    tx_id text NOT NULL,
    kind text NOT NULL,                      -- debit, credit, rollback
    round_id text NOT NULL,
    currency text NOT NULL,
    amount bigint NOT NULL,
    requested_at timestamptz NOT NULL,
    sends integer NOT NULL,
    PRIMARY KEY (operator_id, player_id, tx_id)
);
CREATE TABLE seamless_replies (              -- the operator's answers, and our refusals of them
    operator_id text NOT NULL,
    event_id text NOT NULL,
    player_id text NOT NULL,
    tx_id text NOT NULL,
    answer text NOT NULL,                    -- debited, debit_rejected, credited, rolled_back,
    reason text,                             --   reply_refused
    occurred_at timestamptz NOT NULL,
    PRIMARY KEY (operator_id, event_id)
);
CREATE INDEX seamless_replies_by_tx ON seamless_replies (operator_id, player_id, tx_id);
CREATE TABLE users (
    username text PRIMARY KEY,
    password_hash text NOT NULL,
    role text NOT NULL CHECK (role IN ('support', 'finance', 'regulator')),
    operator_id text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE search_log (
    id bigserial PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT now(),
    username text NOT NULL,
    operator_id text NOT NULL,
    page text NOT NULL,
    player_id text,
    round_id text,
    query jsonb NOT NULL
);
"""

TABLES = (
    "search_log users seamless_replies seamless bet_rejections malfunctions voids"
    " table_versions sessions movements bets rounds tracking"
)


def upgrade() -> None:
    op.execute(SCHEMA)


def downgrade() -> None:
    for table in TABLES.split():
        op.execute(f"DROP TABLE {table}")
