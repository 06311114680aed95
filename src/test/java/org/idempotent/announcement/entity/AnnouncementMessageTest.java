package org.idempotent.announcement.entity;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.StringReader;
import java.time.Instant;
import java.util.UUID;
import org.idempotent.telemetry.TraceContext;
import org.junit.jupiter.api.Test;

class AnnouncementMessageTest {

    private static final UUID EVENT = UUID.fromString("5f0c7a7e-2a8e-4d5b-9a61-0d1f1c3b2e4a");
    private static final Instant APPLIED = Instant.parse("2026-12-01T08:15:30.252814Z");

    @Test
    void aResendOfTheSameRowCarriesTheSameDuplicateIdAndAReannouncementANewOne() {
        AnnouncementMessage first = new AnnouncementMessage(
                7, EVENT, "acct-42", 1250, 98750, 17, APPLIED, 0, 1, "payment", TraceContext.NONE);
        AnnouncementMessage resend = new AnnouncementMessage(
                7, EVENT, "acct-42", 1250, 98750, 17, APPLIED, 0, 2, "payment", TraceContext.NONE);
        AnnouncementMessage reannounced = new AnnouncementMessage(
                7, EVENT, "acct-42", 1250, 98750, 17, APPLIED, 1, 3, "payment", TraceContext.NONE);

        assertThat(resend.duplicateId()).isEqualTo(first.duplicateId());
        assertThat(reannounced.duplicateId()).isNotEqualTo(first.duplicateId());
        assertThat(resend.republished()).isTrue();
        assertThat(first.republished()).isFalse();
    }

    /** Row identities start again in a recreated or restored database: the broker must not take a new row for an old. */
    @Test
    void anotherEventUnderAnIdentityUsedBeforeIsNotADuplicate() {
        AnnouncementMessage before = new AnnouncementMessage(
                7, EVENT, "acct-42", 1250, 98750, 17, APPLIED, 0, 1, "payment", TraceContext.NONE);
        AnnouncementMessage afterRestore = new AnnouncementMessage(
                7, UUID.randomUUID(), "acct-42", 1250, 1250, 1, APPLIED, 0, 1, "payment", TraceContext.NONE);

        assertThat(afterRestore.duplicateId()).isNotEqualTo(before.duplicateId());
    }

    /** After a restore, or a database rebuilt and the events replayed: the same event and sequence, applied anew. */
    @Test
    void theSameEventAppliedAgainLaterIsNotADuplicate() {
        AnnouncementMessage before = new AnnouncementMessage(
                7, EVENT, "acct-42", 1250, 98750, 17, APPLIED, 0, 1, "payment", TraceContext.NONE);
        AnnouncementMessage again = new AnnouncementMessage(
                3,
                EVENT,
                "acct-42",
                1250,
                98750,
                17,
                APPLIED.plusMillis(86_400_000),
                0,
                1,
                "payment",
                TraceContext.NONE);

        assertThat(again.duplicateId()).isNotEqualTo(before.duplicateId());
    }

    @Test
    void theBodyIsTheContractsJson() {
        JsonObject body = Json.createReader(new StringReader(new AnnouncementMessage(
                                7, EVENT, "acct-42", 1250, 98750, 17, APPLIED, 0, 1, "payment", TraceContext.NONE)
                        .json()))
                .readObject();

        assertThat(body.getString("eventId")).isEqualTo(EVENT.toString());
        assertThat(body.getString("accountId")).isEqualTo("acct-42");
        assertThat(body.getJsonNumber("amountCents").longValueExact()).isEqualTo(1250);
        assertThat(body.getJsonNumber("balanceCents").longValueExact()).isEqualTo(98750);
        assertThat(body.getJsonNumber("sequence").longValueExact()).isEqualTo(17);
        assertThat(body.getString("appliedAt")).isEqualTo("2026-12-01T08:15:30.252814Z");
        assertThat(body.getString("kind")).isEqualTo("payment", TraceContext.NONE);
        assertThat(body.keySet()).hasSize(7);
    }
}
