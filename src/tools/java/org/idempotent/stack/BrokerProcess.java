package org.idempotent.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import javax.management.JMException;
import javax.management.ObjectName;

/** The {@link Broker} in a child JVM, so that it can be stopped, killed and restarted like a real one. */
public final class BrokerProcess extends ChildProcess {

    private final Settings settings;
    private int jmxPort;

    private BrokerProcess(Settings settings, Path dataDir, boolean showOutput, List<String> jvmOptions)
            throws IOException {
        super("broker", command(dataDir, jvmOptions), settings.asEnvironment(), settings.stackDir().resolve("broker.log"),
                showOutput);
        this.settings = settings;
    }

    private static List<String> command(Path dataDir, List<String> jvmOptions) {
        List<String> command = new ArrayList<>(List.of(java(), "-Xmx512m"));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", toolsClasspath(), Broker.class.getName(), dataDir.toString()));
        return command;
    }

    public static BrokerProcess start(Settings settings, boolean showOutput, String... jvmOptions) {
        try {
            BrokerProcess broker = new BrokerProcess(settings, settings.stackDir().resolve("broker"), showOutput,
                    List.of(jvmOptions));
            broker.awaitListening(Duration.ofSeconds(60));
            return broker;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** With its platform MBean server open on {@code jmxPort} (loopback, no authentication), for {@link #messageCount}. */
    public static BrokerProcess startWithJmx(Settings settings, boolean showOutput, int jmxPort,
            String... jvmOptions) {
        List<String> options = new ArrayList<>(RemoteJmx.jvmOptions(jmxPort));
        options.addAll(List.of(jvmOptions));
        BrokerProcess broker = start(settings, showOutput, options.toArray(String[]::new));
        broker.jmxPort = jmxPort;
        return broker;
    }

    /**
     * The broker's own count of the queue's messages not yet acknowledged: waiting, scheduled for redelivery, or
     * delivered to a consumer that has not acknowledged them (a message stuck in delivery counts).
     */
    public long messageCount(String queue) throws IOException, JMException {
        try (RemoteJmx jmx = RemoteJmx.connect(jmxPort)) {
            return (Long) jmx.attribute(queueMBean(jmx, queue), "MessageCount");
        }
    }

    /** Stops dispatching the queue's messages to its consumers, which stay connected; they keep arriving. */
    public void pause(String queue) throws IOException, JMException {
        try (RemoteJmx jmx = RemoteJmx.connect(jmxPort)) {
            jmx.invoke(queueMBean(jmx, queue), "pause");
        }
    }

    public void resume(String queue) throws IOException, JMException {
        try (RemoteJmx jmx = RemoteJmx.connect(jmxPort)) {
            jmx.invoke(queueMBean(jmx, queue), "resume");
        }
    }

    private ObjectName queueMBean(RemoteJmx jmx, String queue) throws IOException, JMException {
        if (jmxPort == 0) {
            throw new IllegalStateException("started without JMX");
        }
        Set<ObjectName> names = jmx.names(new ObjectName(
                "org.apache.activemq.artemis:component=addresses,subcomponent=queues,queue=\"" + queue + "\",*"));
        if (names.size() != 1) {
            throw new IllegalStateException("queue " + queue + " not found once on the broker: " + names);
        }
        return names.iterator().next();
    }

    private void awaitListening(Duration timeout) {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            failIfDead("starting");
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(settings.get("BROKER_HOST"), settings.getInt("BROKER_PORT")), 500);
                return;
            } catch (IOException notYet) {
                pause();
            }
        }
        stop(Duration.ofSeconds(5));
        throw new IllegalStateException("broker not listening after " + timeout + "; see " + log());
    }

    private static void pause() {
        try {
            Thread.sleep(200);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** The project's test class path, written by the build (target/runtime/tools.classpath), plus its own classes. */
    static String toolsClasspath() {
        try {
            String dependencies = Files.readString(Build.RUNTIME_DIR.resolve("tools.classpath")).trim();
            return Path.of("target", "test-classes").toAbsolutePath() + java.io.File.pathSeparator
                    + Path.of("target", "classes").toAbsolutePath() + java.io.File.pathSeparator + dependencies;
        } catch (IOException e) {
            throw new UncheckedIOException("run the build first (mvn package): " + e.getMessage(), e);
        }
    }
}
