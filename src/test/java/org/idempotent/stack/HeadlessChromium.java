package org.idempotent.stack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/** Debian's Chromium, headless, through its ChromeDriver (packages chromium, chromium-driver), for console checks. */
public final class HeadlessChromium {

    public static final Path SCREENSHOTS = Path.of("target", "screenshots");

    private HeadlessChromium() {}

    public static WebDriver start() throws IOException {
        Path profile = Files.createTempDirectory(Path.of("target"), "chromium-profile");
        ChromeOptions options = new ChromeOptions();
        options.setBinary("/usr/bin/chromium");
        options.addArguments(
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--window-size=1400,1000",
                "--user-data-dir=" + profile.toAbsolutePath());
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(Path.of("/usr/bin/chromedriver").toFile())
                .build();
        return new ChromeDriver(service, options);
    }

    /** Saves what the browser shows as target/screenshots/NAME.png. */
    public static void screenshot(WebDriver browser, String name) throws IOException {
        Files.createDirectories(SCREENSHOTS);
        Files.write(SCREENSHOTS.resolve(name + ".png"), ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));
    }
}
