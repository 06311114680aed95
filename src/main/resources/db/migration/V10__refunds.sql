-- Refunds (the refund event type, refund/control/Refunds.java). Applied in the transaction of the refund's dedup
-- record, like a payment, and announced through the same outbox in the account's same sequence.

-- The payments ledger: every applied payment, written by the payment's own statement, kept (it is business data, not
-- dedup state: retention never purges it). A refund is checked against it: the payment exists, belongs to the
-- account it refunds, and its refunds never exceed its amount.
CREATE TABLE payments (
    event_id       uuid        PRIMARY KEY,
    account_id     text        NOT NULL,
    amount_cents   bigint      NOT NULL,
    refunded_cents bigint      NOT NULL DEFAULT 0,
    applied_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT payments_amount_positive CHECK (amount_cents > 0),
    CONSTRAINT payments_refunded_within_amount CHECK (refunded_cents BETWEEN 0 AND amount_cents)
);

-- Payments applied before this migration, as far as the outbox still holds them (ANNOUNCEMENT_RETENTION_DAYS); a
-- refund of an older one is dead-lettered UNKNOWN_PAYMENT, and operations.md says how to add its row by hand.
INSERT INTO payments (event_id, account_id, amount_cents, applied_at)
SELECT DISTINCT ON (event_id) event_id, account_id, amount_cents, applied_at
  FROM payment_announcements
 WHERE amount_cents > 0
 ORDER BY event_id, applied_at
    ON CONFLICT (event_id) DO NOTHING;

-- The refunds ledger: its key is the refund's second guard (a refund whose dedup record is gone is not applied twice).
CREATE TABLE refunds (
    event_id         uuid        PRIMARY KEY,
    payment_event_id uuid        NOT NULL REFERENCES payments (event_id),
    amount_cents     bigint      NOT NULL,
    applied_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT refunds_amount_positive CHECK (amount_cents > 0)
);
CREATE INDEX refunds_payment_event_id ON refunds (payment_event_id);

-- What an announcement announces: a payment (amount_cents > 0) or a refund (amount_cents < 0, the change to the
-- balance). Every row before this migration is a payment's.
ALTER TABLE payment_announcements ADD COLUMN kind text NOT NULL DEFAULT 'payment';

-- The rule refunds keep (Refunds.java): no balance below zero. A backstop for the check the refund makes itself.
ALTER TABLE accounts ADD CONSTRAINT accounts_balance_not_negative CHECK (balance_cents >= 0) NOT VALID;
ALTER TABLE accounts VALIDATE CONSTRAINT accounts_balance_not_negative;
