-- The outbox: one row per applied payment, written by the transaction that applies it (with the dedup record and the
-- account update), so that a payment is announced if and only if it committed. The relay publishes unsent rows in id
-- order, which for one account is the order its payments committed (the account's row lock orders them), and marks
-- them sent; sent rows are purged after ANNOUNCEMENT_RETENTION_DAYS, unsent ones never.
ALTER TABLE accounts ADD COLUMN sequence bigint NOT NULL DEFAULT 0;

CREATE TABLE payment_announcements (
    id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id         uuid        NOT NULL,
    account_id       text        NOT NULL,
    amount_cents     bigint      NOT NULL,
    balance_cents    bigint      NOT NULL,
    -- The account's payments numbered from 1 in the order they committed: a subscriber ignores what it has seen.
    account_sequence bigint      NOT NULL,
    applied_at       timestamptz NOT NULL,
    sent_at          timestamptz,
    -- Publications of this row: more than 1 after a crash between a send and its mark, or a re-announcement.
    send_attempts    integer     NOT NULL DEFAULT 0,
    -- Raised by a re-announcement, so that the broker's duplicate detection does not drop the new copy.
    generation       integer     NOT NULL DEFAULT 0,
    CONSTRAINT payment_announcements_account_sequence UNIQUE (account_id, account_sequence)
);

CREATE INDEX payment_announcements_unsent ON payment_announcements (id) WHERE sent_at IS NULL;
CREATE INDEX payment_announcements_sent_at ON payment_announcements (sent_at) WHERE sent_at IS NOT NULL;
CREATE INDEX payment_announcements_event_id ON payment_announcements (event_id);
