package org.idempotent.deployment;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.idempotent.stack.Build;
import org.idempotent.stack.ChildProcess;
import org.idempotent.stack.Commands;
import org.idempotent.stack.Settings;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;

/**
 * The Payara Server domain the tests' run of deployment.md made, on a port base whose ports were all free: what the
 * tests do with it beyond the page (a deployment group), and its stop (killed if need be) on close.
 */
final class PayaraServerDomain implements AutoCloseable {

    static final String NAME = "payments";
    /** The offsets from the port base that create-domain --portbase uses. */
    private static final int[] OFFSETS = {9, 37, 38, 39, 48, 66, 76, 80, 81, 86};

    private final Path asadmin;
    private final Path domainDir;
    private final int portBase;
    private boolean started;
    private final List<String> groups = new ArrayList<>();

    private PayaraServerDomain(Path asadmin, Path domainDir, int portBase) {
        this.asadmin = asadmin;
        this.domainDir = domainDir;
        this.portBase = portBase;
    }

    /**
     * The domain {@link #NAME} that deployment.md's steps created in {@code installation}'s own domains directory on
     * {@code portBase}, and started.
     */
    static PayaraServerDomain adopt(Path installation, int portBase) {
        PayaraServerDomain domain = new PayaraServerDomain(
                installation.resolve("bin").resolve("asadmin"),
                installation.resolve("glassfish").resolve("domains"),
                portBase);
        domain.started = true;
        return domain;
    }

    Path asadmin() {
        return asadmin;
    }

    int adminPort() {
        return portBase + 48;
    }

    int httpPort() {
        return portBase + 80;
    }

    Path domainXml() {
        return domainDir.resolve(NAME).resolve("config").resolve("domain.xml");
    }

    Path serverLog() {
        return domainDir.resolve(NAME).resolve("logs").resolve("server.log");
    }

    /**
     * Runs asadmin in a clean environment (PATH, HOME, JAVA_HOME only), so that the server it starts does not inherit
     * the test run's settings: MicroProfile Config reads environment variables before the domain's own values.
     */
    String run(String... arguments) {
        List<String> command = new ArrayList<>();
        command.add(asadmin.toString());
        command.addAll(List.of(arguments));
        Map<String, String> clean = new HashMap<>();
        for (String name : List.of("PATH", "HOME")) {
            clean.put(name, System.getenv().getOrDefault(name, ""));
        }
        clean.put("JAVA_HOME", System.getProperty("java.home"));
        clean.put("AS_EXTRA_JAVA_OPTS", String.join(" ", ChildProcess.extraJvmOptions()));
        return Commands.run(command, clean, true);
    }

    /**
     * A deployment group of standalone instances on the domain's own node, each on a free port base, not started (the setup script starts them); each
     * instance's configuration uses the Data Grid EJB timer service (the default, a database, is not there for
     * instances: "EJB Timer Service is not available" at deployment, payara/Payara#6381). Returns each instance's
     * HTTP port by name.
     */
    Map<String, Integer> createDeploymentGroup(String group, List<String> instances) throws IOException {
        // One asadmin session for all of it: each asadmin call is a JVM start of its own.
        List<String> commands = new ArrayList<>();
        commands.add("create-deployment-group " + group);
        // The test run's JVM options (C1 only) for every instance made from default-config, as the other JVMs of the
        // tests get them; asadmin reads an unescaped colon as a separator, and a multimode file takes one backslash.
        ChildProcess.extraJvmOptions()
                .forEach(option ->
                        commands.add("create-jvm-options --target default-config " + option.replace(":", "\\\\:")));
        Map<String, Integer> httpPorts = new LinkedHashMap<>();
        int from = portBase + 1000;
        for (String instance : instances) {
            int base = freePortBase(from);
            from = base + 1000;
            commands.add("create-instance --node localhost-" + NAME + " --portbase " + base + " " + instance);
            commands.add("add-instance-to-deployment-group --instance " + instance + " --deploymentgroup " + group);
            commands.add("set configs.config." + instance
                    + "-config.ejb-container.ejb-timer-service.ejb-timer-service=DataGrid");
            httpPorts.put(instance, base + 80);
        }
        groups.add(group);
        session(commands);
        return httpPorts;
    }

    /**
     * Runs {@code commands} in one asadmin session against the DAS; fails on the first that failed (multimode goes on
     * after a failure, and its exit code does not always say so).
     */
    private void session(List<String> commands) throws IOException {
        Path file = Files.createTempFile(domainDir, "session", ".asadmin");
        Files.write(file, commands);
        String output = run("--port", String.valueOf(adminPort()), "multimode", "--file", file.toString());
        if (output.lines().anyMatch(line -> line.matches("^Command .* failed.*"))) {
            throw new IllegalStateException("asadmin " + commands + " failed:\n" + output);
        }
    }

    /** The environment setup-payara-server.sh needs for this domain: {@code settings}, the domain and the build. */
    Map<String, String> setupEnvironment(Settings settings) {
        Map<String, String> environment = new HashMap<>(settings.asEnvironment());
        environment.put("ASADMIN", asadmin.toString());
        environment.put("ADMIN_PORT", String.valueOf(adminPort()));
        environment.put("POSTGRESQL_JAR", Build.POSTGRESQL_DRIVER.toString());
        environment.put(
                "SLF4J_JARS", Build.RUNTIME.slf4j().stream().map(Path::toString).collect(Collectors.joining(" ")));
        environment.put("ARTEMIS_RAR", Build.RAR.toString());
        environment.put("WAR", Build.WAR.toString());
        // asadmin's own JVMs, one per call or session, as the other JVMs of the tests.
        environment.put("AS_EXTRA_JAVA_OPTS", String.join(" ", ChildProcess.extraJvmOptions()));
        return environment;
    }

    /**
     * Rows of an admin console page's main table (class Tbl_sun4; not the navigation tree) with a cell whose text is
     * exactly {@code name}; the name column is a row header (th), the others are td.
     */
    static List<WebElement> consoleTableRows(WebDriver browser, String name) {
        return browser.findElements(By.xpath("//table[contains(concat(' ', @class, ' '), ' Tbl_sun4 ')]//tr[(td|th)"
                + "[normalize-space(.)='" + name + "']]"));
    }

    @Override
    public void close() throws Exception {
        for (String group : groups) {
            // The instances are processes of their own: stopping the domain would leave them running. A group whose
            // setup failed has none running, and the domain must stop all the same.
            try {
                run("--port", String.valueOf(adminPort()), "stop-deployment-group", "--kill", "true", group);
            } catch (IllegalStateException notRunning) {
                System.err.println("Deployment group " + group + " not stopped: " + notRunning.getMessage());
            }
        }
        if (started) {
            try {
                run("stop-domain", "--domaindir", domainDir.toString(), "--kill", "true", NAME);
            } catch (IllegalStateException e) {
                run("stop-domain", "--domaindir", domainDir.toString(), NAME);
            }
        }
    }

    static int freePortBase(int from) {
        for (int base = from; base < 60000; base += 1000) {
            if (allFree(base)) {
                return base;
            }
        }
        throw new IllegalStateException("no port base with all of its ports free");
    }

    private static boolean allFree(int base) {
        for (int offset : OFFSETS) {
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress("0.0.0.0", base + offset));
            } catch (IOException taken) {
                return false;
            }
        }
        return true;
    }
}
