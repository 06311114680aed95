package org.idempotent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No two files of the product use each other, inside a feature as across features: a class that needs a second one
 * which needs it back is one class split in the wrong place, or two that share a third thing that belongs apart. A
 * file uses another if it imports it (or a member of it), names it in full, or names it by its simple name within its
 * package or under a wildcard import; comments and string literals left out.
 */
class MutualDependenciesTest {

    private static final Path SOURCES = Path.of("src/main/java");
    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    private static final Pattern IMPORT =
            Pattern.compile("^import (?:static )?([\\w.]+?)(?:\\.\\*)?;", Pattern.MULTILINE);

    /** A class of the product: its package, its simple name and its code without comments and literals. */
    record Source(String packageName, String name, String code, Set<String> imports) {

        String qualifiedName() {
            return packageName + "." + name;
        }

        boolean uses(Source other) {
            if (other == this) {
                return false;
            }
            if (code.contains(other.qualifiedName())) {
                return true; // imported (a static import of a member too), or named in full
            }
            boolean visible = other.packageName.equals(packageName) || imports.contains(other.packageName);
            return visible
                    && Pattern.compile("\\b" + other.name + "\\b")
                            .matcher(withoutImports())
                            .find();
        }

        private String withoutImports() {
            return IMPORT.matcher(code).replaceAll("");
        }
    }

    @Test
    void noTwoFilesUseEachOther() throws IOException {
        List<Source> sources = sources();
        Map<Source, Set<Source>> uses = new HashMap<>();
        for (Source source : sources) {
            Set<Source> used = new HashSet<>();
            for (Source other : sources) {
                if (source.uses(other)) {
                    used.add(other);
                }
            }
            uses.put(source, used);
        }
        Set<String> mutual = new TreeSet<>();
        uses.forEach((source, used) -> used.stream()
                .filter(other -> uses.get(other).contains(source))
                .forEach(other -> mutual.add(
                        source.name().compareTo(other.name()) < 0
                                ? source.qualifiedName() + " <-> " + other.qualifiedName()
                                : other.qualifiedName() + " <-> " + source.qualifiedName())));

        assertThat(uses.values().stream().mapToInt(Set::size).sum())
                .as("uses found (the scan works)")
                .isGreaterThan(sources.size());
        assertThat(mutual).as("pairs of files that use each other").isEmpty();
    }

    @Test
    void theScanSeesAUseInEitherDirectionAndNotInAComment() {
        Source a = source("package p;\nimport q.B;\nclass A { B b; }");
        Source b = source("package q;\n/** an {@link p.A} in a comment */\nclass B { String s = \"p.A\"; }");
        Source c = source("package q;\nclass C { B b; }");
        Source d = source("package r;\nimport static q.C.X;\nclass D { int x = X; }");

        assertThat(a.uses(b)).isTrue();
        assertThat(b.uses(a)).isFalse();
        assertThat(c.uses(b)).as("same package, no import").isTrue();
        assertThat(b.uses(c)).isFalse();
        assertThat(d.uses(c)).as("a static import").isTrue();
    }

    private static List<Source> sources() throws IOException {
        List<Source> sources = new ArrayList<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                String name = file.getFileName().toString().replace(".java", "");
                sources.add(source(Files.readString(file), name));
            }
        }
        return sources;
    }

    private static Source source(String text) {
        Matcher declared = Pattern.compile("class (\\w+)").matcher(text);
        declared.find();
        return source(text, declared.group(1));
    }

    private static Source source(String text, String name) {
        String code = code(text);
        Matcher pkg = PACKAGE.matcher(code);
        pkg.find();
        Set<String> imports = new HashSet<>();
        Matcher imported = IMPORT.matcher(code);
        while (imported.find()) {
            imports.add(imported.group(1));
        }
        return new Source(pkg.group(1), name, code, imports);
    }

    /** The text without comments, string and character literals (text blocks included). */
    static String code(String text) {
        StringBuilder code = new StringBuilder(text.length());
        int i = 0;
        while (i < text.length()) {
            if (text.startsWith("//", i)) {
                i = text.indexOf('\n', i) < 0 ? text.length() : text.indexOf('\n', i);
            } else if (text.startsWith("/*", i)) {
                i = text.indexOf("*/", i + 2) + 2;
            } else if (text.startsWith("\"\"\"", i)) {
                i = text.indexOf("\"\"\"", i + 3) + 3;
                code.append("\"\"");
            } else if (text.charAt(i) == '"' || text.charAt(i) == '\'') {
                char quote = text.charAt(i++);
                while (text.charAt(i) != quote) {
                    i += text.charAt(i) == '\\' ? 2 : 1;
                }
                i++;
                code.append(quote).append(quote);
            } else {
                code.append(text.charAt(i++));
            }
        }
        return code.toString();
    }
}
