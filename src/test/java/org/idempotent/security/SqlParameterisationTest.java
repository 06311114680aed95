package org.idempotent.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every SQL statement of the product is a constant with bind parameters: no statement is assembled from values at
 * run time, so no input can change what a statement does.
 */
class SqlParameterisationTest {

    private static final Path MAIN = Path.of("src", "main", "java");
    private static final Pattern SQL_CALL = Pattern.compile(
            "\\.(prepareStatement|prepareCall|createNativeQuery|createQuery|addBatch|executeQuery|executeUpdate|execute)\\(");
    private static final Pattern SQL_CONSTANT = Pattern.compile("static final String ([A-Z_]+)\\s*=([^;]*);");
    private static final Pattern LITERALS = Pattern.compile("\"\"\"[\\s\\S]*?\"\"\"|\"(?:\\\\.|[^\"\\\\])*\"");

    @Test
    void statementsAreConstantsOrLiteralsWithBindParameters() throws IOException {
        List<String> findings = new ArrayList<>();
        int calls = 0;
        for (Path file : javaSources()) {
            String source = Files.readString(file);
            if (source.contains("createStatement(")) {
                findings.add(file + ": java.sql.Statement (no bind parameters)");
            }
            Matcher call = SQL_CALL.matcher(source);
            while (call.find()) {
                String argument = firstArgument(source, call.end());
                if (argument.isEmpty()) {
                    continue;
                }
                calls++;
                String code = LITERALS.matcher(argument).replaceAll("\"\"");
                boolean literal = argument.startsWith("\"");
                boolean constant = code.matches("[A-Z_]+");
                if (!(literal || constant) || code.contains("+")) {
                    findings.add(file + ": " + call.group(1) + "(" + argument + ")");
                }
            }
            Matcher constant = SQL_CONSTANT.matcher(source);
            while (constant.find()) {
                if (LITERALS.matcher(constant.group(2)).replaceAll("\"\"").contains("+")) {
                    findings.add(file + ": " + constant.group(1) + " is assembled");
                }
            }
        }

        assertThat(calls).as("statements found (the scan works)").isGreaterThan(5);
        assertThat(findings).isEmpty();
    }

    /** The first argument of the call whose '(' ends at {@code start}, up to a top-level ',' or ')'. */
    private static String firstArgument(String source, int start) {
        int depth = 0;
        int i = start;
        while (i < source.length()) {
            char c = source.charAt(i);
            if (source.startsWith("\"\"\"", i)) {
                i = source.indexOf("\"\"\"", i + 3) + 3;
                continue;
            }
            if (c == '"') {
                i++;
                while (source.charAt(i) != '"') {
                    i += source.charAt(i) == '\\' ? 2 : 1;
                }
            } else if (c == '(') {
                depth++;
            } else if ((c == ')' || c == ',') && depth == 0) {
                break;
            } else if (c == ')') {
                depth--;
            }
            i++;
        }
        return source.substring(start, i).strip();
    }

    private static List<Path> javaSources() throws IOException {
        try (Stream<Path> files = Files.walk(MAIN)) {
            return files.filter(path -> path.toString().endsWith(".java")).toList();
        }
    }
}
