package org.idempotent.stack;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.xz.XZCompressorInputStream;

/**
 * Where a PostgreSQL server's programs come from, and the operating-system user that runs them.
 *
 * <p>Two sources: the build's, the PostgreSQL server the Maven build took from Maven Central (pom.xml,
 * postgres.binaries.version: initdb, pg_ctl and postgres, no client tools), unpacked under target/runtime on first
 * use; and the machine's, Debian's newest installation under /usr/lib/postgresql, which also has pg_basebackup and
 * pg_rewind. The run command and the tests' default database use the build's: one pinned version on every machine,
 * nothing to install. The failover suite needs the machine's (a standby and its rewind).
 *
 * <p>PostgreSQL refuses to run as root: run as root, the programs run as the user {@code postgres} where the machine
 * has one (Debian's packages make it), otherwise as {@code nobody}.
 */
public record PostgresBinaries(Path bin, String description) {

    private static final Path MACHINE_INSTALLATIONS = Path.of("/usr/lib/postgresql");
    private static final Path UNPACKED = Build.RUNTIME_DIR.resolve("postgres");

    /** The build's server, unpacked from its archive (target/runtime/postgres-binaries) the first time. */
    public static PostgresBinaries fromBuild() {
        Path bin = UNPACKED.resolve("bin");
        if (!Files.isExecutable(bin.resolve("postgres"))) {
            unpack(archive(), UNPACKED);
        }
        return new PostgresBinaries(bin, "PostgreSQL " + version(bin) + " from the build (Maven Central)");
    }

    /** The machine's newest installation, if it has one with the tools a standby needs. */
    public static Optional<PostgresBinaries> ofMachine() {
        if (!Files.isDirectory(MACHINE_INSTALLATIONS)) {
            return Optional.empty();
        }
        try (Stream<Path> versions = Files.list(MACHINE_INSTALLATIONS)) {
            return versions.map(version -> version.resolve("bin"))
                    .filter(bin -> Files.isExecutable(bin.resolve("pg_rewind")))
                    .max(Path::compareTo)
                    .map(bin -> new PostgresBinaries(bin, "PostgreSQL " + version(bin) + " of the machine"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The machine's, or a one-line failure naming the Debian package for a caller that needs its tools. */
    public static PostgresBinaries ofMachineFor(String purpose) {
        return ofMachine()
                .orElseThrow(() -> new IllegalStateException(purpose
                        + " needs PostgreSQL's server tools (pg_basebackup, pg_rewind), which the build's binaries lack:"
                        + " install Debian's postgresql package (.ci/run does)"));
    }

    /** The operating-system user the server runs as: this process's own, or, as root, an unprivileged one. */
    public static String serverUser() {
        if (!runningAsRoot()) {
            return System.getProperty("user.name");
        }
        try {
            return Files.readAllLines(Path.of("/etc/passwd")).stream().anyMatch(line -> line.startsWith("postgres:"))
                    ? "postgres"
                    : "nobody";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static boolean runningAsRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** Runs one of the programs ({@code command[0]}) as {@link #serverUser()}; returns its output. */
    public String run(String... command) {
        List<String> line = new ArrayList<>();
        if (runningAsRoot()) {
            line.addAll(List.of("runuser", "-u", serverUser(), "--"));
        }
        line.add(bin.resolve(command[0]).toString());
        line.addAll(List.of(command).subList(1, command.length));
        return Commands.run(line, Map.of());
    }

    private static String version(Path bin) {
        return Commands.run(List.of(bin.resolve("postgres").toString(), "--version"), Map.of())
                .strip()
                .replaceAll("^.* ", "");
    }

    private static Path archive() {
        Path dir = Build.RUNTIME_DIR.resolve("postgres-binaries");
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(file -> file.getFileName().toString().endsWith(".txz"))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException("no PostgreSQL archive in " + dir));
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "the build unpacks PostgreSQL's binaries into " + dir + " (mvn package): " + e.getMessage(), e);
        }
    }

    /** Into a sibling directory first, then renamed: a run that stops half-way leaves nothing that looks complete. */
    private static synchronized void unpack(Path archive, Path target) {
        Path partial = target.resolveSibling(target.getFileName() + ".partial");
        try {
            Commands.deleteRecursively(partial);
            Files.createDirectories(partial);
            try (InputStream file = new BufferedInputStream(Files.newInputStream(archive));
                    TarArchiveInputStream tar = new TarArchiveInputStream(new XZCompressorInputStream(file))) {
                for (TarArchiveEntry entry = tar.getNextEntry(); entry != null; entry = tar.getNextEntry()) {
                    Path path = partial.resolve(entry.getName()).normalize();
                    if (!path.startsWith(partial)) {
                        throw new IllegalStateException("archive entry outside its directory: " + entry.getName());
                    }
                    if (entry.isDirectory()) {
                        Files.createDirectories(path);
                    } else if (entry.isSymbolicLink()) {
                        Files.createDirectories(path.getParent());
                        Files.createSymbolicLink(path, Path.of(entry.getLinkName()));
                    } else {
                        Files.createDirectories(path.getParent());
                        Files.copy(tar, path);
                        Files.setPosixFilePermissions(
                                path,
                                PosixFilePermissions.fromString(
                                        (entry.getMode() & 0100) != 0 ? "rwxr-xr-x" : "rw-r--r--"));
                    }
                }
            }
            Commands.deleteRecursively(target);
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("could not unpack " + archive, e);
        }
    }
}
