package org.idempotent.operations;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.idempotent.fixtures.PrometheusServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The shipped alert rules through Prometheus's own tool (Debian's package prometheus): valid, and each alert firing
 * and not firing as its unit tests say, on synthetic series with the real {@code for:} durations.
 */
class AlertRulesIT {

    @Test
    void theRuleFilePassesPromtoolsCheck() throws Exception {
        PrometheusServer.Result check = PrometheusServer.promtool(
                PrometheusServer.RULES.getParent(),
                "check",
                "rules",
                PrometheusServer.RULES.getFileName().toString());

        assertThat(check.exitCode()).as(check.output()).isZero();
        assertThat(check.output()).contains("SUCCESS");
    }

    /**
     * docker/prometheus.yml, and prometheus-ha.yml for the pair, load the rules from their own directory, where an
     * installation mounts them.
     */
    @ParameterizedTest
    @ValueSource(strings = {"prometheus.yml", "prometheus-ha.yml"})
    void thePrometheusConfigurationLoadsTheRulesBesideIt(String file) throws Exception {
        Path directory = Files.createDirectories(Path.of("target", "prometheus-config"));
        Files.copy(
                PrometheusServer.CONFIG.resolveSibling(file),
                directory.resolve("prometheus.yml"),
                StandardCopyOption.REPLACE_EXISTING);
        Files.copy(
                PrometheusServer.RULES,
                directory.resolve(PrometheusServer.RULES.getFileName()),
                StandardCopyOption.REPLACE_EXISTING);

        PrometheusServer.Result check = PrometheusServer.promtool(directory, "check", "config", "prometheus.yml");

        assertThat(check.exitCode()).as(check.output()).isZero();
        assertThat(check.output()).contains("SUCCESS: 1 rule files found");
    }

    @Test
    void everyAlertFiresAndStaysSilentAsItsUnitTestsSay() throws Exception {
        PrometheusServer.Result test = PrometheusServer.promtool(
                PrometheusServer.RULE_TESTS.getParent(),
                "test",
                "rules",
                PrometheusServer.RULE_TESTS.getFileName().toString());

        assertThat(test.exitCode()).as(test.output()).isZero();
        assertThat(test.output()).contains("SUCCESS");
    }
}
