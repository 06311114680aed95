package org.idempotent.stack;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What Payara Micro runs beside the WAR, as a build leaves it in its {@code target/runtime}: the Payara Micro jar, the
 * Artemis resource adapter, and the server libraries (the JDBC driver; SLF4J, through which the adapter logs). This
 * build's is {@link Build#RUNTIME}; a benchmark may run another build's beside it (the product before a change).
 */
public record ServerRuntime(Path dir) {

    public Path payaraMicro() {
        return dir.resolve("payara-micro.jar");
    }

    public Path rar() {
        return dir.resolve("artemis-ra.rar");
    }

    public Path postgresqlDriver() {
        return dir.resolve("postgresql.jar");
    }

    /** SLF4J's API and its binding to java.util.logging; absent from a build that packed them inside its RAR. */
    public List<Path> slf4j() {
        return Stream.of("slf4j-api.jar", "slf4j-jdk14.jar").map(dir::resolve).toList();
    }

    /** Payara Micro's {@code --addlibs} value: the server libraries this runtime has. */
    public String addLibs() {
        return Stream.concat(Stream.of(postgresqlDriver()), slf4j().stream())
                .filter(Files::isRegularFile)
                .map(Path::toString)
                .collect(Collectors.joining(":"));
    }
}
