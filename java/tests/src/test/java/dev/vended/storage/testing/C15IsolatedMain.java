package dev.vended.storage.testing;

import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.List;

/**
 * Child-JVM entry point of C15: {@code C15IsolatedMain SCENARIO ENDPOINT BUCKET ENTRY...}. Only the
 * isolated loader built from the {@code ENTRY} class path entries can see the library: this JVM's
 * application class path holds the test classes only. Prints the report and {@code C15-OK}, or the
 * failure and exits 1.
 */
public final class C15IsolatedMain {
    private C15IsolatedMain() {}

    /**
     * @param args scenario, endpoint, bucket, class path entries of the isolated loader
     */
    public static void main(String[] args) throws Exception {
        String scenario = args[0];
        String endpoint = args[1];
        String bucket = args[2];
        List<Path> entries = java.util.Arrays.stream(args, 3, args.length).map(Path::of).toList();
        try {
            ClassLoader.getSystemClassLoader().loadClass("dev.vended.storage.ObjectStore");
            System.out.println("C15-FAILED the application class loader can see the library");
            System.exit(1);
        } catch (ClassNotFoundException expected) {
            System.out.println(
                    "application class loader cannot see dev.vended.storage.ObjectStore");
        }
        try {
            List<String> report;
            if (scenario.equals("unload")) {
                report = C15Scenario.unloadThenReload(entries, endpoint, bucket);
            } else {
                try (URLClassLoader loader = C15Scenario.isolatedLoader(entries)) {
                    report = C15Scenario.run(loader, endpoint, bucket, scenario);
                }
            }
            for (String line : report) {
                System.out.println("  " + line);
            }
        } catch (Throwable t) {
            System.out.println("C15-FAILED " + t);
            t.printStackTrace(System.out);
            System.out.flush();
            System.exit(1);
        }
        System.out.println("C15-OK");
    }
}
