package org.idempotent.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.text.NumberFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/** Throughput against concurrency, one line per variant, as a PNG (JFreeChart, headless). */
final class Chart {

    private Chart() {}

    static void write(List<Result> results, Path png) throws IOException {
        System.setProperty("java.awt.headless", "true");
        Map<String, XYSeries> series = new LinkedHashMap<>();
        for (Result r : results) {
            series.computeIfAbsent(r.variant(), XYSeries::new).add(r.concurrency(), r.rate());
        }
        XYSeriesCollection data = new XYSeriesCollection();
        series.values().forEach(data::addSeries);
        JFreeChart chart = ChartFactory.createXYLineChart(
                "Payment consumer: throughput against concurrency",
                "concurrency (JDBC threads / consumer sessions)",
                "messages per second",
                data,
                PlotOrientation.VERTICAL,
                true,
                false,
                false);
        XYPlot plot = chart.getXYPlot();
        LogAxis concurrency = new LogAxis("concurrency (JDBC threads / consumer sessions)");
        concurrency.setBase(2);
        concurrency.setTickUnit(new NumberTickUnit(1));
        plot.setDomainAxis(concurrency);
        // The ceilings are an order of magnitude above the product: on a linear scale the product is a flat line.
        LogAxis rate = new LogAxis("messages per second (log scale)");
        rate.setBase(2);
        rate.setTickUnit(new NumberTickUnit(1));
        rate.setNumberFormatOverride(NumberFormat.getIntegerInstance(Locale.ROOT));
        plot.setRangeAxis(rate);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < data.getSeriesCount(); i++) {
            boolean cold = data.getSeriesKey(i).toString().endsWith("cold start");
            renderer.setSeriesStroke(
                    i,
                    cold
                            ? new BasicStroke(
                                    2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f)
                            : new BasicStroke(2f));
        }
        plot.setRenderer(renderer);
        ChartUtils.saveChartAsPNG(png.toFile(), chart, 1000, 600);
    }
}
