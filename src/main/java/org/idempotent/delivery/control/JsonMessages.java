package org.idempotent.delivery.control;

import static org.idempotent.delivery.entity.Rejection.Reason.BODY_TOO_LARGE;
import static org.idempotent.delivery.entity.Rejection.Reason.EMPTY_BODY;
import static org.idempotent.delivery.entity.Rejection.Reason.INVALID_ENCODING;
import static org.idempotent.delivery.entity.Rejection.Reason.INVALID_OCCURRED_AT;
import static org.idempotent.delivery.entity.Rejection.Reason.MALFORMED_JSON;
import static org.idempotent.delivery.entity.Rejection.Reason.MISSING_FIELD;
import static org.idempotent.delivery.entity.Rejection.Reason.NOT_A_JSON_OBJECT;
import static org.idempotent.delivery.entity.Rejection.Reason.UNSUPPORTED_MESSAGE_TYPE;

import jakarta.jms.BytesMessage;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.TextMessage;
import jakarta.json.Json;
import jakarta.json.JsonConfig;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonReaderFactory;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.idempotent.delivery.entity.RejectedMessage;
import org.idempotent.delivery.entity.Rejection;

/**
 * What every event type's message contract shares: a UTF-8 JSON object in a TextMessage or a BytesMessage, within the
 * limits below, with a canonical UUID as its {@code eventId} and an optional RFC 3339 {@code occurredAt}; unknown
 * fields are ignored. Anything else is a {@link RejectedMessage} naming the reason. An event type's parser reads its
 * own fields with the helpers here.
 */
public final class JsonMessages {

    /** Larger bodies are rejected unread: an event is about 120 bytes. */
    public static final int MAX_BODY_SIZE = 64 * 1024;

    /** Levels of nesting accepted, the body's own object included: {"x":[[1]]} has three. */
    public static final int MAX_DEPTH = 32;
    /** Longest number accepted anywhere in the body, in characters: an amount needs 13. */
    public static final int MAX_NUMBER_LENGTH = 100;

    // Canonical 8-4-4-4-12 form only: UUID.fromString also accepts shortened groups such as "1-1-1-1-1".
    private static final Pattern CANONICAL_UUID =
            Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

    /*
     * Json.createReader looks the provider up on every call; the factory is thread-safe and looked up once. The
     * limits are explicit, not the provider's defaults: they are part of the message contract. A duplicate key is
     * refused, not resolved: two parsers that let different copies of "amountCents" win would disagree on an event.
     * The Parsson keys are what Payara's JSON-P provider reads; KEY_STRATEGY is the portable JSON-P 2.1 spelling.
     */
    private static final JsonReaderFactory READERS = Json.createReaderFactory(Map.of(
            // Parsson refuses a depth equal to its limit: MAX_DEPTH levels pass, one more does not.
            "org.eclipse.parsson.maxDepth",
            MAX_DEPTH + 1,
            "org.eclipse.parsson.maxBigDecimalLength",
            MAX_NUMBER_LENGTH,
            "org.eclipse.parsson.rejectDuplicateKeys",
            true,
            JsonConfig.KEY_STRATEGY,
            JsonConfig.KeyStrategy.NONE));

    private JsonMessages() {}

    /** Whether {@code text} is an event ID as the contract writes it: a UUID in canonical 8-4-4-4-12 form. */
    public static boolean isCanonicalUuid(String text) {
        return text != null && CANONICAL_UUID.matcher(text).matches();
    }

    /**
     * The message's body as text.
     *
     * @throws RejectedMessage if the message can never be an event (type, size, encoding)
     * @throws JMSException if the body cannot be read from the provider (transient: the caller lets it redeliver)
     */
    public static String body(Message message) throws JMSException {
        if (message instanceof TextMessage text) {
            String body = text.getText();
            if (body == null || body.isEmpty()) {
                throw new RejectedMessage(EMPTY_BODY, "the text message has no body");
            }
            if (body.length() > MAX_BODY_SIZE) {
                throw new RejectedMessage(BODY_TOO_LARGE, body.length() + " characters, limit " + MAX_BODY_SIZE);
            }
            return body;
        }
        if (message instanceof BytesMessage bytes) {
            long length = bytes.getBodyLength();
            if (length == 0) {
                throw new RejectedMessage(EMPTY_BODY, "the bytes message has no body");
            }
            if (length > MAX_BODY_SIZE) {
                throw new RejectedMessage(BODY_TOO_LARGE, length + " bytes, limit " + MAX_BODY_SIZE);
            }
            byte[] body = new byte[(int) length];
            bytes.readBytes(body);
            return decodeUtf8(body);
        }
        throw new RejectedMessage(
                UNSUPPORTED_MESSAGE_TYPE,
                "expected a TextMessage or BytesMessage with UTF-8 JSON, got " + typeName(message));
    }

    static String decodeUtf8(byte[] body) {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(body))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new RejectedMessage(INVALID_ENCODING, "the body is not valid UTF-8");
        }
    }

    /**
     * Reads {@code json} as an object and its fields with {@code fields}. The body is in memory here, so nothing this
     * throws can change on a redelivery: any exception of the parser or of a value conversion is a rejection,
     * whatever its type (Parsson's limits surface as plain RuntimeException and UnsupportedOperationException, a huge
     * exponent as NumberFormatException). Errors pass.
     */
    public static <T> T parse(String json, Function<JsonObject, T> fields) {
        try {
            return fields.apply(readObject(json));
        } catch (RejectedMessage rejected) {
            throw rejected;
        } catch (RuntimeException e) {
            throw new RejectedMessage(
                    MALFORMED_JSON,
                    "the body cannot be read as the contract's JSON (limits: depth "
                            + MAX_DEPTH + ", numbers of " + MAX_NUMBER_LENGTH + " characters, no duplicate keys): "
                            + e.getClass().getSimpleName() + ": " + abbreviate(String.valueOf(e.getMessage())));
        }
    }

    private static JsonObject readObject(String json) {
        JsonValue value;
        try (JsonReader reader = READERS.createReader(new StringReader(json))) {
            value = reader.readValue();
        }
        if (value.getValueType() != JsonValue.ValueType.OBJECT) {
            throw new RejectedMessage(
                    NOT_A_JSON_OBJECT, "the body is a JSON " + value.getValueType() + ", not an object");
        }
        return value.asJsonObject();
    }

    public static JsonValue required(JsonObject object, String field) {
        JsonValue value = object.get(field);
        if (value == null || value.getValueType() == JsonValue.ValueType.NULL) {
            throw new RejectedMessage(MISSING_FIELD, "the field '" + field + "' is missing");
        }
        return value;
    }

    /** A required field holding an event's ID: a UUID string in canonical form, or {@code reason}. */
    public static UUID uuid(JsonObject object, String field, Rejection.Code reason) {
        JsonValue value = required(object, field);
        if (value instanceof JsonString string && isCanonicalUuid(string.getString())) {
            return UUID.fromString(string.getString());
        }
        throw new RejectedMessage(reason, field + " must be a UUID string, got " + abbreviate(value));
    }

    /** A required field holding an integer within {@code min..max}, or {@code reason}. */
    public static long integer(JsonObject object, String field, long min, long max, Rejection.Code reason) {
        JsonValue value = required(object, field);
        String rule = field + " must be an integer " + min + ".." + max;
        if (value instanceof JsonNumber number) {
            BigDecimal amount;
            try {
                amount = number.bigDecimalValue();
            } catch (RuntimeException e) {
                // e.g. 1e99999999999: the exponent does not fit an int; printing the value would throw again.
                throw new RejectedMessage(
                        reason,
                        rule + ", got a number beyond BigDecimal's range ("
                                + e.getClass().getSimpleName() + ")");
            }
            // Compared before anything that scales: stripTrailingZeros of 1e-999999999 would be fine, of a huge
            // exponent slow.
            if (amount.compareTo(BigDecimal.valueOf(min)) >= 0
                    && amount.compareTo(BigDecimal.valueOf(max)) <= 0
                    && amount.stripTrailingZeros().scale() <= 0) {
                return amount.longValueExact();
            }
        }
        throw new RejectedMessage(reason, rule + ", got " + abbreviate(value));
    }

    /** Optional: an RFC 3339 date-time with an offset, e.g. 2026-12-01T08:15:30.250Z; null if absent. */
    public static Instant occurredAt(JsonObject object) {
        JsonValue value = object.get("occurredAt");
        if (value == null || value.getValueType() == JsonValue.ValueType.NULL) {
            return null;
        }
        String rule = "occurredAt must be an RFC 3339 date-time with an offset, got " + abbreviate(value);
        if (!(value instanceof JsonString string)) {
            throw new RejectedMessage(INVALID_OCCURRED_AT, rule);
        }
        try {
            return OffsetDateTime.parse(string.getString()).toInstant();
        } catch (DateTimeParseException e) {
            throw new RejectedMessage(INVALID_OCCURRED_AT, rule + " (" + e.getMessage() + ")");
        }
    }

    public static String abbreviate(JsonValue value) {
        return abbreviate(value.toString());
    }

    private static String abbreviate(String text) {
        return text.length() <= 80 ? text : text.substring(0, 77) + "...";
    }

    private static String typeName(Message message) {
        for (Class<?> type : message.getClass().getInterfaces()) {
            if (type.getName().startsWith("jakarta.jms.")) {
                return type.getSimpleName();
            }
        }
        return message.getClass().getSimpleName();
    }
}
