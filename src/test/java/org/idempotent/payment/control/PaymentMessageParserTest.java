package org.idempotent.payment.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.UUID;
import org.idempotent.delivery.control.JsonMessages;
import org.idempotent.delivery.entity.RejectedMessage;
import org.idempotent.delivery.entity.Rejection.Reason;
import org.idempotent.payment.entity.PaymentEvent;
import org.idempotent.payment.entity.PaymentRejection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PaymentMessageParserTest {

    private static final String ID = "0b7e6c1e-3a51-4c4e-9a59-8f4a5e2b7d10";

    @Test
    void validEventIsReadWithUnknownFieldsIgnored() {
        PaymentEvent event = PaymentMessageParser.parse(
                "{\"eventId\":\"" + ID + "\",\"accountId\":\"acct_1.a:b-c\",\"amountCents\":500,\"currency\":\"EUR\"}");

        assertThat(event).isEqualTo(new PaymentEvent(UUID.fromString(ID), "acct_1.a:b-c", 500));
    }

    @Test
    void occurredAtOfContractVersionTwoIsReadWithItsOffset() {
        PaymentEvent event = PaymentMessageParser.parse("{\"eventId\":\"" + ID
                + "\",\"accountId\":\"a\",\"amountCents\":5," + "\"occurredAt\":\"2026-11-30T23:30:00.250+01:00\"}");

        assertThat(event.occurredAt()).isEqualTo(Instant.parse("2026-11-30T22:30:00.250Z"));
        assertThat(PaymentMessageParser.parse(json(ID, "a", "5")).occurredAt())
                .as("version 1: none")
                .isNull();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '`',
            value = {
                "`\"2026-11-30T23:30:00\"` ",
                "`\"yesterday\"`",
                "`1764545400000`",
                "`[\"2026-11-30T23:30:00Z\"]`",
            })
    void occurredAtThatIsNotAnOffsetDateTimeIsRejected(String value) {
        String body = "{\"eventId\":\"" + ID + "\",\"accountId\":\"a\",\"amountCents\":5,\"occurredAt\":" + value + "}";

        assertThatThrownBy(() -> PaymentMessageParser.parse(body))
                .isInstanceOfSatisfying(
                        RejectedMessage.class,
                        e -> assertThat(e.rejection().reason()).isEqualTo(Reason.INVALID_OCCURRED_AT));
    }

    @Test
    void amountLimitsAreInclusive() {
        assertThat(PaymentMessageParser.parse(json(ID, "a", "1")).amountCents()).isEqualTo(1);
        assertThat(PaymentMessageParser.parse(json(ID, "a", "1000000000000")).amountCents())
                .isEqualTo(1_000_000_000_000L);
    }

    @Test
    void accountIdOf64CharactersIsAccepted() {
        assertThat(PaymentMessageParser.parse(json(ID, "a".repeat(64), "1")).accountId())
                .hasSize(64);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '`',
            value = {
                "not json at all                                                              | MALFORMED_JSON",
                "{\"eventId\":                                                                | MALFORMED_JSON",
                "[1,2,3]                                                                      | NOT_A_JSON_OBJECT",
                "42                                                                           | NOT_A_JSON_OBJECT",
                "{\"accountId\":\"a\",\"amountCents\":1}                                      | MISSING_FIELD",
                "{\"eventId\":\"" + ID + "\",\"amountCents\":1}                               | MISSING_FIELD",
                "{\"eventId\":\"" + ID + "\",\"accountId\":\"a\"}                             | MISSING_FIELD",
                "{\"eventId\":null,\"accountId\":\"a\",\"amountCents\":1}                     | MISSING_FIELD",
                "{\"eventId\":\"not-a-uuid\",\"accountId\":\"a\",\"amountCents\":1}           | INVALID_EVENT_ID",
                "{\"eventId\":\"1-1-1-1-1\",\"accountId\":\"a\",\"amountCents\":1}            | INVALID_EVENT_ID",
                "{\"eventId\":42,\"accountId\":\"a\",\"amountCents\":1}                       | INVALID_EVENT_ID",
                "{\"eventId\":\"" + ID + "\",\"accountId\":\"\",\"amountCents\":1}            | INVALID_ACCOUNT_ID",
                "{\"eventId\":\"" + ID + "\",\"accountId\":\"a b\",\"amountCents\":1}         | INVALID_ACCOUNT_ID",
                "{\"eventId\":\"" + ID + "\",\"accountId\":\"a/b\",\"amountCents\":1}         | INVALID_ACCOUNT_ID",
                "{\"eventId\":\"" + ID + "\",\"accountId\":7,\"amountCents\":1}               | INVALID_ACCOUNT_ID",
                "{\"eventId\":\"" + ID + "\",\"accountId\":\"a\",\"amountCents\":0}           | INVALID_AMOUNT",
                "{\"eventId\":\"" + ID + "\",\"accountId\":\"a\",\"amountCents\":-5}          | INVALID_AMOUNT",
                "{\"eventId\":\"" + ID + "\",\"accountId\":\"a\",\"amountCents\":1000000000001} | INVALID_AMOUNT",
                "{\"eventId\":\"" + ID + "\",\"accountId\":\"a\",\"amountCents\":12.5}        | INVALID_AMOUNT",
                "{\"eventId\":\"" + ID + "\",\"accountId\":\"a\",\"amountCents\":\"500\"}     | INVALID_AMOUNT",
                "{\"eventId\":\"" + ID + "\",\"accountId\":\"a\",\"amountCents\":1e400}       | INVALID_AMOUNT",
            })
    void invalidEventIsRejectedWithItsReason(String body, String reason) {
        assertThatThrownBy(() -> PaymentMessageParser.parse(body))
                .isInstanceOfSatisfying(
                        RejectedMessage.class,
                        e -> assertThat(e.rejection().reason().name()).isEqualTo(reason))
                .hasMessageContaining(reason);
    }

    @Test
    void accountIdOver64CharactersIsRejected() {
        assertThatThrownBy(() -> PaymentMessageParser.parse(json(ID, "a".repeat(65), "1")))
                .isInstanceOfSatisfying(
                        RejectedMessage.class,
                        e -> assertThat(e.rejection().reason()).isEqualTo(PaymentRejection.INVALID_ACCOUNT_ID));
    }

    @Test
    void rejectionDetailNamesTheOffendingValueShortened() {
        String longValue = "x".repeat(500);

        assertThatThrownBy(() -> PaymentMessageParser.parse(json(ID, longValue, "1")))
                .isInstanceOfSatisfying(
                        RejectedMessage.class,
                        e -> assertThat(e.rejection().detail())
                                .startsWith("accountId must be")
                                .hasSizeLessThan(200));
    }

    /**
     * Inputs a parser with default limits throws odd exceptions on (a RuntimeException, an
     * UnsupportedOperationException, a NumberFormatException): each is a rejection, never a transient failure.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "unknown field nested deeper than the limit | MALFORMED_JSON",
                "unknown field holding a 5000-digit number  | MALFORMED_JSON",
                "amount with an exponent of 11 digits       | MALFORMED_JSON",
                "amount with a negative huge exponent       | INVALID_AMOUNT",
                "eventId given twice                        | MALFORMED_JSON",
                "amountCents given twice                    | MALFORMED_JSON",
            })
    void hostileButWellFormedInputIsRejectedWithItsReason(String input, String reason) {
        String valid = "\"eventId\":\"" + ID + "\",\"accountId\":\"a\",\"amountCents\":5";
        String body = switch (input) {
            case "unknown field nested deeper than the limit" ->
                "{" + valid + ",\"x\":" + "[".repeat(5000) + "]".repeat(5000) + "}";
            case "unknown field holding a 5000-digit number" -> "{" + valid + ",\"x\":" + "7".repeat(5000) + "}";
            case "amount with an exponent of 11 digits" -> json(ID, "a", "1e99999999999");
            case "amount with a negative huge exponent" -> json(ID, "a", "1e-999999999");
            case "eventId given twice" -> "{" + valid + ",\"eventId\":\"" + UUID.randomUUID() + "\"}";
            case "amountCents given twice" -> "{" + valid + ",\"amountCents\":500000}";
            default -> throw new IllegalArgumentException(input);
        };

        assertThatThrownBy(() -> PaymentMessageParser.parse(body)).isInstanceOfSatisfying(RejectedMessage.class, e -> {
            assertThat(e.rejection().reason().name()).isEqualTo(reason);
            assertThat(e.rejection().detail()).hasSizeLessThan(400);
        });
    }

    @Test
    void nestingUpToTheLimitIsAcceptedAndOneLevelMoreIsNot() {
        assertThat(PaymentMessageParser.parse(nested(JsonMessages.MAX_DEPTH)).amountCents())
                .isEqualTo(5);
        assertThatThrownBy(() -> PaymentMessageParser.parse(nested(JsonMessages.MAX_DEPTH + 1)))
                .isInstanceOfSatisfying(
                        RejectedMessage.class,
                        e -> assertThat(e.rejection().reason()).isEqualTo(Reason.MALFORMED_JSON));
    }

    /** A valid event with an unknown field of arrays, {@code levels} deep in all. */
    private static String nested(int levels) {
        int arrays = levels - 1;
        return "{\"eventId\":\"" + ID + "\",\"accountId\":\"a\",\"amountCents\":5,\"x\":" + "[".repeat(arrays)
                + "]".repeat(arrays) + "}";
    }

    private static String json(String eventId, String accountId, String amount) {
        return "{\"eventId\":\"" + eventId + "\",\"accountId\":\"" + accountId + "\",\"amountCents\":" + amount + "}";
    }
}
