package org.idempotent.stack;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/**
 * What Payara Micro runs beside the WAR, as a build leaves it in its {@code target/runtime}: the Payara Micro jar, the
 * Artemis resource adapter, and the server libraries (the JDBC driver; SLF4J, through which the adapter logs). This
 * build's is {@link Build#RUNTIME}; a benchmark may run another build's beside it (the product before a change).
 */
public record ServerRuntime(Path dir) {

    /** Server libraries, in class-path order; SLF4J is absent from a build that packed it inside its RAR. */
    private static final List<String> LIBRARIES = List.of("postgresql.jar", "slf4j-api.jar", "slf4j-jdk14.jar");

    public Path payaraMicro() {
        return dir.resolve("payara-micro.jar");
    }

    public Path rar() {
        return dir.resolve("artemis-ra.rar");
    }

    /** Payara Micro's {@code --addlibs} value: the server libraries this runtime has. */
    public String addLibs() {
        return LIBRARIES.stream()
                .map(dir::resolve)
                .filter(Files::isRegularFile)
                .map(Path::toString)
                .collect(Collectors.joining(":"));
    }
}
