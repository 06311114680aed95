package org.idempotent.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * A class-data-sharing archive of Payara Micro with the product deployed, for the Payara Micro JVMs of the test run
 * (system property {@code stack.class.data.sharing}, set by pom.xml): the first instance of a build writes it when it
 * exits normally, every later one maps it instead of loading and verifying those classes again (measured on one test
 * instance: ready in 8.6-8.8 s against 10.6-10.9 s).
 *
 * <p>The archive is named after this JDK's version, the Payara Micro jar's size and time and the WAR's content (its
 * entries' names and checksums, not the time it was packaged): a new JDK, Payara Micro or WAR gets an archive of its
 * own, and the {@link #KEPT} newest are kept (a benchmark may compare two WARs). The WAR counts because an archive holds
 * the application's classes too, and one of them removed from the WAR since was still loaded from it (a listener
 * deleted from the sources failed the deployment at boot with NoSuchMethodError). A JVM killed before it exits writes
 * nothing, and a later instance tries again.
 *
 * @param writing where the JVM writes the archive as it exits, or null if it maps one or neither
 * @param archive where a written archive is put for the later JVMs of the same WAR
 */
record ClassDataArchive(List<String> options, Path writing, Path archive) {

    static final String ENABLED = "stack.class.data.sharing";
    private static final Logger LOG = Logger.getLogger(ClassDataArchive.class.getName());
    /** One instance of this JVM writes at a time. */
    private static final AtomicBoolean WRITING = new AtomicBoolean();
    /** Archives kept in target/runtime, the newest: each is about 90 MB. */
    private static final int KEPT = 3;
    /** What a JVM stopped by SIGTERM exits with, after its shutdown and the archive's dump. */
    private static final int TERMINATED = 128 + 15;

    /** Neither maps nor writes an archive (another JDK's JVM, or a run that does not ask for it). */
    static ClassDataArchive none() {
        return new ClassDataArchive(List.of(), null, null);
    }

    /** For the next Payara Micro on this JVM's {@code java} with {@code war}: map the archive, write it, or neither. */
    static ClassDataArchive next(Path war) {
        boolean wanted = Boolean.getBoolean(ENABLED);
        // A test's own WAR (a fault hook's) serves a JVM or two: writing its archive as one exits costs about 10 s,
        // more than the JVMs after it save.
        if (wanted
                && !war.toAbsolutePath()
                        .normalize()
                        .equals(Build.WAR.toAbsolutePath().normalize())
                && !Files.isRegularFile(archive(war))) {
            return none();
        }
        return next(wanted, war);
    }

    /** The archive of {@code war} to map if there is one, never one to write. */
    static ClassDataArchive mapped(Path war) {
        if (!Boolean.getBoolean(ENABLED)) {
            return none();
        }
        Path archive = archive(war);
        return Files.isRegularFile(archive) ? mapping(archive) : none();
    }

    /** {@link #next(Path)}, asked for or not by the caller rather than by the run's system property. */
    static ClassDataArchive next(boolean wanted, Path war) {
        if (!wanted) {
            return none();
        }
        Path archive = archive(war);
        if (Files.isRegularFile(archive)) {
            return mapping(archive);
        }
        if (!WRITING.compareAndSet(false, true)) {
            return none();
        }
        Path writing = archive.resolveSibling(
                archive.getFileName() + "." + ProcessHandle.current().pid());
        return new ClassDataArchive(List.of("-XX:ArchiveClassesAtExit=" + writing), writing, archive);
    }

    private static ClassDataArchive mapping(Path archive) {
        return new ClassDataArchive(List.of("-XX:SharedArchiveFile=" + archive), null, archive);
    }

    /** Once the JVM it was for has exited: a complete archive is put in place, anything else dropped. */
    void exited(int exitCode) {
        if (writing == null) {
            return;
        }
        try {
            if ((exitCode == 0 || exitCode == TERMINATED) && Files.isRegularFile(writing)) {
                Files.move(writing, archive, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                keepNewest(archive.getParent());
                LOG.log(Level.INFO, "Payara Micro class-data-sharing archive written: {0}", archive);
            } else {
                Files.deleteIfExists(writing);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            WRITING.set(false);
        }
    }

    private static Path archive(Path war) {
        try {
            Path jar = Build.PAYARA_MICRO;
            return jar.resolveSibling(String.format(
                    "payara-micro-%s-%x-%x-%08x.jsa",
                    Runtime.version(),
                    Files.size(jar),
                    Files.getLastModifiedTime(jar).toMillis(),
                    content(war)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A checksum of the entries' names and checksums, as the WAR's directory lists them: the same for a repackaging. */
    private static long content(Path war) throws IOException {
        CRC32 content = new CRC32();
        try (ZipFile zip = new ZipFile(war.toFile())) {
            zip.stream().sorted(Comparator.comparing(ZipEntry::getName)).forEach(entry -> {
                content.update(entry.getName().getBytes(StandardCharsets.UTF_8));
                content.update(
                        ByteBuffer.allocate(Long.BYTES).putLong(entry.getCrc()).flip());
            });
        }
        return content.getValue();
    }

    /** The archives of earlier builds, all but the {@link #KEPT} newest, removed. */
    private static void keepNewest(Path directory) throws IOException {
        List<Path> archives = new ArrayList<>();
        try (var found = Files.newDirectoryStream(directory, "payara-micro-*.jsa")) {
            found.forEach(archives::add);
        }
        archives.sort(Comparator.comparing(ClassDataArchive::modified).reversed());
        for (Path old : archives.subList(Math.min(KEPT, archives.size()), archives.size())) {
            Files.deleteIfExists(old);
        }
    }

    private static FileTime modified(Path file) {
        try {
            return Files.getLastModifiedTime(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
