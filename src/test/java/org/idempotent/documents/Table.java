package org.idempotent.documents;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/** A markdown table of a document: its header's cells and its rows', each row with its line. */
record Table(Document document, List<String> header, List<Row> rows) {

    record Row(int line, List<String> cells) {

        String cell(int column) {
            return column < cells.size() ? cells.get(column) : "";
        }
    }

    /** The tables whose first header cell is that word (case aside): "alert", "panel". */
    static List<Table> headed(Document document, String first) {
        return of(document).stream()
                .filter(table ->
                        table.header().getFirst().toLowerCase(Locale.ROOT).equals(first))
                .toList();
    }

    static List<Table> of(Document document) {
        List<Table> tables = new ArrayList<>();
        String[] lines = document.prose().split("\n", -1);
        for (int i = 0; i + 1 < lines.length; i++) {
            if (!lines[i].startsWith("|") || !lines[i + 1].matches("\\|[ :|-]+\\|?\\s*")) {
                continue;
            }
            List<String> header = cells(lines[i]);
            List<Row> rows = new ArrayList<>();
            int row = i + 2;
            for (; row < lines.length && lines[row].startsWith("|"); row++) {
                rows.add(new Row(row + 1, cells(lines[row])));
            }
            tables.add(new Table(document, header, rows));
            i = row;
        }
        return tables;
    }

    int column(String name) {
        return header.stream().map(h -> h.toLowerCase(Locale.ROOT)).toList().indexOf(name);
    }

    /** The cells between the outer pipes; an escaped pipe (in a code span) stays in its cell. */
    private static List<String> cells(String line) {
        String inner = line.strip().replaceAll("^\\|", "").replaceAll("(?<!\\\\)\\|$", "");
        return Arrays.stream(inner.split("(?<!\\\\)\\|", -1)).map(String::strip).toList();
    }
}
