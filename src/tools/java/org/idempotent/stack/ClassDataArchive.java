package org.idempotent.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A class-data-sharing archive of Payara Micro with the product deployed, for the Payara Micro JVMs of the test run
 * (system property {@code stack.class.data.sharing}, set by pom.xml): the first instance of a build writes it when it
 * exits normally, every later one maps it instead of loading and verifying those classes again (measured on one test
 * instance: ready in 8.6-8.8 s against 10.6-10.9 s).
 *
 * <p>The archive is named after this JDK's version and the Payara Micro jar's size and time, so a new JDK or a new
 * Payara Micro gets an archive of its own; a class that changed since (a rebuilt WAR) fails the JVM's own check and is
 * loaded from its jar as usual. A JVM killed before it exits writes nothing, and a later instance tries again.
 */
record ClassDataArchive(List<String> options, Path writing) {

    static final String ENABLED = "stack.class.data.sharing";
    private static final Logger LOG = Logger.getLogger(ClassDataArchive.class.getName());
    /** One instance of this JVM writes at a time. */
    private static final AtomicBoolean WRITING = new AtomicBoolean();
    /** What a JVM stopped by SIGTERM exits with, after its shutdown and the archive's dump. */
    private static final int TERMINATED = 128 + 15;

    /** Neither maps nor writes an archive (another JDK's JVM, or a run that does not ask for it). */
    static ClassDataArchive none() {
        return new ClassDataArchive(List.of(), null);
    }

    /** For the next Payara Micro on this JVM's {@code java}: map the archive, write it, or neither. */
    static ClassDataArchive next() {
        return next(Boolean.getBoolean(ENABLED));
    }

    /** {@link #next()}, asked for or not by the caller rather than by the run's system property. */
    static ClassDataArchive next(boolean wanted) {
        if (!wanted) {
            return none();
        }
        Path archive = archive();
        if (Files.isRegularFile(archive)) {
            return new ClassDataArchive(List.of("-XX:SharedArchiveFile=" + archive), null);
        }
        if (!WRITING.compareAndSet(false, true)) {
            return none();
        }
        Path writing = archive.resolveSibling(
                archive.getFileName() + "." + ProcessHandle.current().pid());
        return new ClassDataArchive(List.of("-XX:ArchiveClassesAtExit=" + writing), writing);
    }

    /** Once the JVM it was for has exited: a complete archive is put in place, anything else dropped. */
    void exited(int exitCode) {
        if (writing == null) {
            return;
        }
        try {
            if ((exitCode == 0 || exitCode == TERMINATED) && Files.isRegularFile(writing)) {
                Files.move(writing, archive(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                LOG.log(Level.INFO, "Payara Micro class-data-sharing archive written: {0}", archive());
            } else {
                Files.deleteIfExists(writing);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            WRITING.set(false);
        }
    }

    private static Path archive() {
        try {
            Path jar = Build.PAYARA_MICRO;
            return jar.resolveSibling(String.format(
                    "payara-micro-%s-%x-%x.jsa",
                    Runtime.version(),
                    Files.size(jar),
                    Files.getLastModifiedTime(jar).toMillis()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
