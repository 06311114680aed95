-- The audit of "release from quarantine": an administrator decided that an event quarantined as STALE (older than
-- the dedup horizon, without a dedup record) is to be applied after all. The consumer applies a stale event only if a
-- row here names it, and the dedup insert still guards it. Who, when, why. Never purged by retention.
CREATE TABLE released_events (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id    uuid        NOT NULL,
    released_at timestamptz NOT NULL DEFAULT now(),
    released_by text        NOT NULL,
    reason      text        NOT NULL CONSTRAINT released_events_reason_given CHECK (btrim(reason) <> '')
);

CREATE INDEX released_events_event_id ON released_events (event_id);
