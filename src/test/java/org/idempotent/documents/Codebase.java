package org.idempotent.documents;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** What the source tree says: its classes, SQL functions, Maven profiles, operator commands and dedup layouts. */
final class Codebase {

    static final Path TESTS = Path.of("src", "test", "java");
    /** Every Java source folder: the product, its tests, the tools the tests and benchmarks run, the broker plugins. */
    static final List<Path> JAVA = List.of(
            Path.of("src", "main", "java"), TESTS, Path.of("src", "tools", "java"), Path.of("src", "broker", "java"));

    static final Path MIGRATIONS = Path.of("src", "main", "resources", "db", "migration");
    static final Path OPERATE = Path.of("server-config", "artemis", "operate.sh");
    static final Path LAYOUTS =
            Path.of("src", "main", "java", "org", "idempotent", "schema", "entity", "DedupLayout.java");

    private static final Pattern FUNCTION =
            Pattern.compile("(?i)\\bCREATE\\s+(?:OR\\s+REPLACE\\s+)?FUNCTION\\s+(?:\\w+\\.)?([a-z_][a-z0-9_]*)");
    /** A profile's id: the first id of its block (its plugins' executions have theirs further down). */
    private static final Pattern PROFILE = Pattern.compile("(?s)<profile>.*?<id>([^<]+)</id>");

    private static final Pattern CASE = Pattern.compile("(?s)\\bcase \"\\$\\{1:-}\" in\\b(.*?)\\besac\\b");
    private static final Pattern CASE_LABEL = Pattern.compile("(?m)^\\s*([a-z][\\w|-]*)\\)");
    private static final Pattern COMMENT = Pattern.compile("(?s)/\\*.*?\\*/|//[^\\n]*");
    private static final Pattern CONSTANT = Pattern.compile("(?m)^\\s*([A-Z][A-Z0-9_]*)\\s*[,;(]");

    /** Every Java source by its path, read once. */
    private static final Map<Path, String> SOURCES = index();

    private Codebase() {}

    /** Test classes by name: the files under src/test/java. */
    static boolean isTestClass(String name) {
        return SOURCES.keySet().stream().anyMatch(file -> file.startsWith(TESTS) && named(file, name));
    }

    /** The sources of the classes of that name, top-level or nested. */
    static Optional<String> sourceOf(String name) {
        Pattern nested = Pattern.compile("\\b(class|record|interface|enum) " + name + "\\b");
        String sources = SOURCES.entrySet().stream()
                .filter(e ->
                        named(e.getKey(), name) || nested.matcher(e.getValue()).find())
                .map(Map.Entry::getValue)
                .collect(Collectors.joining("\n"));
        return sources.isEmpty() ? Optional.empty() : Optional.of(sources);
    }

    /** A method, field or nested type of that name in the source. */
    static boolean declares(String source, String member) {
        return Pattern.compile("\\b" + Pattern.quote(member) + "\\s*\\(|\\b(class|record|interface|enum) " + member
                        + "\\b|\\b" + member + "\\s*=")
                .matcher(source)
                .find();
    }

    /** Any Java source has a method of that name: a test method the guarantees name. */
    static boolean hasMethod(String name) {
        Pattern method = Pattern.compile("\\b" + name + "\\s*\\(");
        return SOURCES.values().stream()
                .anyMatch(source -> method.matcher(source).find());
    }

    /** The functions the migrations (and the conversions an owner runs by hand) create. */
    static Set<String> sqlFunctions() {
        return matches(sqlFiles(), FUNCTION, m -> m.group(1).toLowerCase());
    }

    /** Every word of the SQL: the tables, columns, indexes and functions a document may name. */
    static Set<String> sqlWords() {
        return matches(sqlFiles(), Pattern.compile("\\b[a-z_][a-z0-9_]*\\b"), m -> m.group());
    }

    static Set<String> profiles() {
        return matches(List.of(Path.of("pom.xml")), PROFILE, m -> m.group(1).strip());
    }

    /** The commands operate.sh's case statement accepts. */
    static Set<String> operatorCommands() {
        Matcher block = CASE.matcher(read(OPERATE));
        if (!block.find()) {
            throw new IllegalStateException(OPERATE + " has no case \"${1:-}\" in ... esac");
        }
        Set<String> commands = new TreeSet<>();
        Matcher label = CASE_LABEL.matcher(block.group(1));
        while (label.find()) {
            commands.addAll(List.of(label.group(1).split("\\|")));
        }
        return commands;
    }

    static int migrations() {
        return sqlFiles().stream()
                .filter(file -> file.startsWith(MIGRATIONS))
                .toList()
                .size();
    }

    /** The constants of DedupLayout, read from its source (comments left out): those before the first member. */
    static int layouts() {
        String source = COMMENT.matcher(read(LAYOUTS)).replaceAll("");
        String body = source.substring(source.indexOf('{', source.indexOf("enum DedupLayout")) + 1);
        Matcher constant = CONSTANT.matcher(body.substring(0, body.indexOf(';') + 1));
        int count = 0;
        while (constant.find()) {
            count++;
        }
        return count;
    }

    static List<Path> sqlFiles() {
        return Stream.of(MIGRATIONS, Path.of("server-config"))
                .flatMap(Codebase::list)
                .filter(file -> file.toString().endsWith(".sql"))
                .toList();
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Stream<Path> list(Path folder) {
        try (Stream<Path> files = Files.list(folder)) {
            return files.sorted().toList().stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Set<String> matches(List<Path> files, Pattern pattern, Function<Matcher, String> value) {
        Set<String> found = new TreeSet<>();
        for (Path file : files) {
            Matcher m = pattern.matcher(read(file));
            while (m.find()) {
                found.add(value.apply(m));
            }
        }
        return found;
    }

    private static boolean named(Path file, String name) {
        return file.getFileName().toString().equals(name + ".java");
    }

    private static Map<Path, String> index() {
        return JAVA.stream()
                .filter(Files::isDirectory)
                .flatMap(folder -> {
                    try (Stream<Path> files = Files.walk(folder)) {
                        return files.filter(f -> f.toString().endsWith(".java")).toList().stream();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                })
                .collect(Collectors.toMap(file -> file, Codebase::read));
    }
}
