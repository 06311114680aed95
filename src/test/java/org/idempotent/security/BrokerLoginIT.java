package org.idempotent.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.JMSSecurityException;
import jakarta.jms.QueueBrowser;
import jakarta.jms.Session;
import java.util.Collections;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.Test;

/**
 * The broker the product ships a configuration for (server-config/artemis) requires a login, and each of its three
 * roles may do only its part on the product's queues.
 */
class BrokerLoginIT {

    private static final String DENIED = "does not have permission";

    private final Settings settings = Settings.fromEnvironment();

    @Test
    void anonymousAndWrongPasswordConnectionsAreRefused() {
        assertThatThrownBy(() -> connect(null, null)).isInstanceOf(JMSSecurityException.class);
        assertThatThrownBy(() -> connect(settings.get("BROKER_USER"), "wrong"))
                .isInstanceOf(JMSSecurityException.class);
    }

    @Test
    void theConfiguredUserLogsIn() throws JMSException {
        try (Connection connection = connect(settings.get("BROKER_USER"), settings.get("BROKER_PASSWORD"))) {
            assertThat(connection.getClientID()).isNull();
        }
    }

    @Test
    void aProducerCanNeitherReadNorWriteTheDeadLettersNorConsumePayments() throws JMSException {
        try (Connection producer =
                connect(settings.get("BROKER_PRODUCER_USER"), settings.get("BROKER_PRODUCER_PASSWORD"))) {
            Session session = producer.createSession(false, Session.AUTO_ACKNOWLEDGE);
            var deadLetters = session.createQueue(settings.get("DEAD_LETTER_QUEUE"));
            assertThatThrownBy(() -> session.createConsumer(deadLetters)).hasMessageContaining(DENIED);
            assertThatThrownBy(() -> browseAll(session.createBrowser(deadLetters)))
                    .hasMessageContaining(DENIED);
            assertThatThrownBy(() -> session.createProducer(deadLetters).send(session.createTextMessage("{}")))
                    .hasMessageContaining(DENIED);
            assertThatThrownBy(() -> session.createConsumer(session.createQueue(settings.get("PAYMENTS_QUEUE"))))
                    .hasMessageContaining(DENIED);
        }
    }

    @Test
    void theApplicationCanNeitherReadTheDeadLettersNorCreateQueues() throws JMSException {
        try (Connection application = connect(settings.get("BROKER_USER"), settings.get("BROKER_PASSWORD"))) {
            Session session = application.createSession(false, Session.AUTO_ACKNOWLEDGE);
            assertThatThrownBy(() -> session.createConsumer(session.createQueue(settings.get("DEAD_LETTER_QUEUE"))))
                    .hasMessageContaining(DENIED);
            assertThatThrownBy(() -> session.createProducer(session.createQueue("not.declared"))
                            .send(session.createTextMessage("{}")))
                    .hasMessageContaining(DENIED);
        }
    }

    @Test
    void anOperatorMayBrowseTheDeadLetters() throws JMSException {
        try (Connection operator =
                connect(settings.get("BROKER_OPERATOR_USER"), settings.get("BROKER_OPERATOR_PASSWORD"))) {
            Session session = operator.createSession(false, Session.AUTO_ACKNOWLEDGE);
            assertThatCode(() ->
                            browseAll(session.createBrowser(session.createQueue(settings.get("DEAD_LETTER_QUEUE")))))
                    .doesNotThrowAnyException();
        }
    }

    private static int browseAll(QueueBrowser browser) throws JMSException {
        try (browser) {
            return Collections.list(browser.getEnumeration()).size();
        }
    }

    private Connection connect(String user, String password) throws JMSException {
        Connection connection = new ActiveMQConnectionFactory(settings.brokerUrl(), user, password).createConnection();
        connection.start();
        return connection;
    }
}
