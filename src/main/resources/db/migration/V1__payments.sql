-- The dedup record: its primary key decides, atomically, whether an event was seen before.
CREATE TABLE processed_events (
    event_id     uuid        PRIMARY KEY,
    processed_at timestamptz NOT NULL DEFAULT now()
);

-- The business row. last_event_id is the second guard: the guarded upsert never applies the same event twice in a
-- row, even when the dedup record was bypassed or purged.
CREATE TABLE accounts (
    id            text        PRIMARY KEY,
    balance_cents bigint      NOT NULL,
    last_event_id uuid,
    updated_at    timestamptz NOT NULL,
    CONSTRAINT accounts_id_format CHECK (id ~ '^[A-Za-z0-9_.:-]{1,64}$')
);
