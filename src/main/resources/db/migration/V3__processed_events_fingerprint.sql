-- SHA-256 of the event's canonical payload (see PaymentEvent.fingerprint): tells a true duplicate from a producer
-- that reused an event ID for a different payment. Rows recorded before this migration keep NULL: unknown.
ALTER TABLE processed_events ADD COLUMN fingerprint bytea;
