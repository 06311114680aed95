-- The audit of "forget event": an administrator removed an event's dedup record (and released the account guard) so
-- that a deliberate replay of it, e.g. from the dead-letter queue, is applied again. Who, when, why, and what the
-- forgotten record said. Never purged by retention: these rows are few, and they explain a balance.
CREATE TABLE forgotten_events (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id       uuid        NOT NULL,
    forgotten_at   timestamptz NOT NULL DEFAULT now(),
    forgotten_by   text        NOT NULL,
    reason         text        NOT NULL CONSTRAINT forgotten_events_reason_given CHECK (btrim(reason) <> ''),
    processed_at   timestamptz NOT NULL,
    fingerprint    bytea,
    guard_released boolean     NOT NULL
);

CREATE INDEX forgotten_events_event_id ON forgotten_events (event_id);
