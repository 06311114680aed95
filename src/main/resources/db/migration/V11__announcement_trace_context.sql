-- The trace context of the transaction that wrote an announcement (W3C traceparent and tracestate), so that the
-- relay's publish belongs to the same trace as the payment or refund it announces, however long the row waits; null
-- while tracing is off. Nullable without a default: only the catalog changes, on every partition at once.
ALTER TABLE payment_announcements ADD COLUMN trace_parent text, ADD COLUMN trace_state text;
