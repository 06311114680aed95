-- One dedup table for every event type: an event ID is unique across kinds. kind names the type that recorded the
-- event (the delivery's EventType), so that a reviewer tells a payment's record from a refund's. Every record written
-- before this migration is a payment's; a constant default adds the column without rewriting the table.
ALTER TABLE processed_events ADD COLUMN kind text NOT NULL DEFAULT 'payment';
ALTER TABLE processed_events ADD CONSTRAINT processed_events_kind_format CHECK (kind ~ '^[a-z][a-z0-9_]{0,31}$');

-- The table by week as server-config/convert-dedup-to-weeks.sql creates it from now on: with the column.
CREATE OR REPLACE FUNCTION processed_events_create_by_week() RETURNS void
    LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
    CREATE TABLE processed_events (
        event_id     uuid        NOT NULL,
        processed_at timestamptz NOT NULL DEFAULT now(),
        fingerprint  bytea,
        event_day    date        NOT NULL DEFAULT DATE '1970-01-01',
        kind         text        NOT NULL DEFAULT 'payment',
        CONSTRAINT processed_events_pkey PRIMARY KEY (event_id, event_day),
        CONSTRAINT processed_events_kind_format CHECK (kind ~ '^[a-z][a-z0-9_]{0,31}$')
    ) PARTITION BY RANGE (event_day);
    CREATE INDEX processed_events_processed_at ON processed_events (processed_at);
    CREATE TABLE processed_events_default PARTITION OF processed_events DEFAULT;
END
$$;
