package dev.vended.storage.iceberg;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.util.HashMap;
import java.util.Map;

/**
 * Runs Iceberg's REST catalog test server ({@code org.apache.iceberg.rest.RESTCatalogServer} of
 * {@code iceberg-open-api} test-fixtures: a JdbcCatalog on in-memory SQLite behind Iceberg's own
 * REST servlet) in a child JVM, until its stdin closes. The catalog's properties are the system
 * properties {@code rest-server.<property>}. Prints {@code REST-SERVER-READY} once it serves.
 */
public final class RestCatalogServerMain {

    private RestCatalogServerMain() {}

    /**
     * @param args unused
     * @throws Exception when the server cannot start
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> config = new HashMap<>();
        System.getProperties().forEach((k, v) -> {
            String key = k.toString();
            if (key.startsWith("rest-server.")) {
                config.put(key.substring("rest-server.".length()), v.toString());
            }
        });
        Class<?> type = Class.forName("org.apache.iceberg.rest.RESTCatalogServer");
        Constructor<?> ctor = type.getDeclaredConstructor(Map.class);
        ctor.setAccessible(true);
        Object server = ctor.newInstance(config);
        type.getMethod("start", boolean.class).invoke(server, false);
        System.out.println("REST-SERVER-READY");
        System.out.flush();
        try {
            while (System.in.read() >= 0) {
                // until the parent closes our stdin
            }
        } catch (IOException e) {
            // the parent is gone
        }
        type.getMethod("stop").invoke(server);
        System.exit(0);
    }
}
