package org.idempotent.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.JMSSecurityException;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.Test;

/** The broker the product ships a configuration for requires a login. */
class BrokerLoginIT {

    private final Settings settings = Settings.fromEnvironment();

    @Test
    void anonymousAndWrongPasswordConnectionsAreRefused() {
        assertThatThrownBy(() -> connect(null, null)).isInstanceOf(JMSSecurityException.class);
        assertThatThrownBy(() -> connect(settings.get("BROKER_USER"), "wrong")).isInstanceOf(JMSSecurityException.class);
    }

    @Test
    void theConfiguredUserLogsIn() throws JMSException {
        try (Connection connection = connect(settings.get("BROKER_USER"), settings.get("BROKER_PASSWORD"))) {
            assertThat(connection.getClientID()).isNull();
        }
    }

    private Connection connect(String user, String password) throws JMSException {
        Connection connection = new ActiveMQConnectionFactory(settings.brokerUrl(), user, password).createConnection();
        connection.start();
        return connection;
    }
}
