package org.idempotent.stack;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.activemq.artemis.core.config.FileDeploymentManager;
import org.apache.activemq.artemis.core.config.impl.FileConfiguration;
import org.apache.activemq.artemis.core.config.impl.SecurityConfiguration;
import org.apache.activemq.artemis.core.server.embedded.EmbeddedActiveMQ;
import org.apache.activemq.artemis.spi.core.security.ActiveMQJAASSecurityManager;
import org.apache.activemq.artemis.spi.core.security.jaas.InVMLoginModule;

/**
 * A real ActiveMQ Artemis broker with a persistent journal, configured by server-config/broker.xml, in a process of
 * its own: {@code java -cp ... org.idempotent.stack.Broker <data dir>}. Stops cleanly on SIGTERM / Ctrl-C.
 */
public final class Broker {

    public static final Path CONFIG = Path.of("server-config", "broker.xml");
    public static final String ROLE = "payments";

    /**
     * Artemis logs an audit line per message sent, routed and acknowledged (as the distribution's log4j2 file
     * does not, by default): at INFO that is half the broker's CPU and 5 KB of log per payment.
     */
    private static final Logger AUDIT = Logger.getLogger("org.apache.activemq.audit");

    private Broker() {}

    public static void main(String[] args) throws Exception {
        AUDIT.setLevel(Level.WARNING);
        Settings settings = Settings.fromEnvironment();
        Path dataDir = Path.of(args.length > 0 ? args[0] : settings.stackDir().resolve("broker").toString());
        Files.createDirectories(dataDir);
        System.setProperty("broker.port", settings.get("BROKER_PORT"));

        SecurityConfiguration users = new SecurityConfiguration();
        users.addUser(settings.get("BROKER_USER"), settings.get("BROKER_PASSWORD"));
        users.addRole(settings.get("BROKER_USER"), ROLE);

        FileConfiguration configuration = new FileConfiguration();
        new FileDeploymentManager(CONFIG.toAbsolutePath().toUri().toString())
                .addDeployable(configuration)
                .readConfiguration();
        // The relative journal directories of broker.xml resolve against the broker instance directory.
        configuration.setBrokerInstance(dataDir.toFile());

        EmbeddedActiveMQ broker = new EmbeddedActiveMQ();
        broker.setConfiguration(configuration);
        broker.setSecurityManager(new ActiveMQJAASSecurityManager(InVMLoginModule.class.getName(), users));
        broker.start();
        System.out.printf("Artemis broker up on port %s, journal in %s%n", settings.get("BROKER_PORT"), dataDir);

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                broker.stop();
            } catch (Exception e) {
                e.printStackTrace();
            } finally {
                stopped.countDown();
            }
        }));
        stopped.await();
    }
}
