package org.idempotent.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Starts what the integration tests share before the first of them: the test database (DB_NAME, created if missing)
 * and a fresh Artemis broker on the test port, in a process of its own. Unit test runs start nothing.
 */
public class StackListener implements TestExecutionListener {

    private static volatile BrokerProcess broker;

    @Override
    public void testPlanExecutionStarted(TestPlan plan) {
        if (!containsIntegrationTests(plan)) {
            return;
        }
        Settings settings = Settings.fromEnvironment();
        try {
            Database.ensureExists(settings);
            Commands.deleteRecursively(settings.stackDir());
            Files.createDirectories(settings.stackDir());
            PayaraMicroProcess.adminPasswordFile(settings.stackDir(), settings);
        } catch (SQLException e) {
            throw new IllegalStateException("PostgreSQL not reachable at " + settings.jdbcUrl(), e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        broker = BrokerProcess.start(settings, false, TestQueues.brokerProperties());
    }

    @Override
    public void testPlanExecutionFinished(TestPlan plan) {
        if (broker != null) {
            broker.stop(Duration.ofSeconds(30));
            broker = null;
        }
    }

    private static boolean containsIntegrationTests(TestPlan plan) {
        return plan.getRoots().stream()
                .flatMap(root -> plan.getDescendants(root).stream())
                .map(TestIdentifier::getSource)
                .flatMap(java.util.Optional::stream)
                .anyMatch(source ->
                        source instanceof ClassSource c && c.getClassName().endsWith("IT"));
    }
}
