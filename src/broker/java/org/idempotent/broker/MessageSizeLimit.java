package org.idempotent.broker;

import java.util.Map;
import org.apache.activemq.artemis.api.core.ActiveMQException;
import org.apache.activemq.artemis.api.core.ActiveMQExceptionType;
import org.apache.activemq.artemis.api.core.Message;
import org.apache.activemq.artemis.core.server.ServerSession;
import org.apache.activemq.artemis.core.server.plugin.ActiveMQServerPlugin;
import org.apache.activemq.artemis.core.transaction.Transaction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A broker plugin that refuses any send larger than {@code maxBytes} (broker.xml, broker-plugins), on every protocol,
 * before the message is routed: the producer's send fails with a clear error, and no queue ever holds it.
 *
 * <p>Why at the broker: Artemis's JMS client materialises a received message's body before the listener is called
 * (a TextMessage is decoded into a String, a large message is awaited whole), so a consumer cannot refuse a 100 MB
 * body by its size; sixteen of them on sixteen sessions exhaust any reasonable heap. Artemis has no setting that caps
 * a single message. The consumer's own limit (64 KiB of body) stays, with a reason on the dead letter, for what passes
 * this one.
 */
public class MessageSizeLimit implements ActiveMQServerPlugin {

    public static final String MAX_BYTES = "maxBytes";
    static final long DEFAULT_MAX_BYTES = 1024 * 1024;

    private static final Logger LOG = LoggerFactory.getLogger(MessageSizeLimit.class);

    private long maxBytes = DEFAULT_MAX_BYTES;

    @Override
    public void init(Map<String, String> properties) {
        String configured = properties.get(MAX_BYTES);
        if (configured != null) {
            maxBytes = Long.parseLong(configured.strip());
            if (maxBytes <= 0) {
                throw new IllegalArgumentException(MAX_BYTES + " must be positive, got " + configured);
            }
        }
        LOG.info("Refusing messages over {} bytes", maxBytes);
    }

    public long maxBytes() {
        return maxBytes;
    }

    @Override
    public void beforeSend(
            ServerSession session, Transaction tx, Message message, boolean direct, boolean noAutoCreateQueue)
            throws ActiveMQException {
        long size = size(message);
        if (size > maxBytes) {
            LOG.warn(
                    "Refused a message of {} bytes to {} from {}: the limit is {} bytes",
                    size,
                    message.getAddress(),
                    session == null ? "?" : session.getUsername(),
                    maxBytes);
            throw new ActiveMQException(
                    ActiveMQExceptionType.ILLEGAL_STATE,
                    "message of " + size + " bytes refused: the broker accepts at most " + maxBytes + " bytes");
        }
    }

    /** The message as the broker stores it, body and headers; for a large message, its whole streamed size. */
    static long size(Message message) throws ActiveMQException {
        return Math.max(message.getPersistentSize(), message.getWholeMessageSize());
    }
}
