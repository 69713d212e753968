package dev.vended.storage.iceberg;

import org.apache.iceberg.rest.RESTCatalogAdapter;
import org.apache.iceberg.rest.RESTCatalogServlet;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;

/**
 * The child JVM's main class (see {@link RestCatalogServerMain#start}): Iceberg's REST catalog
 * test server, {@code RESTCatalogServer}'s own backend catalog and adapter behind Iceberg's {@code
 * RESTCatalogServlet}, as its {@code start()} builds them, but served by a Jetty connector bound to
 * 127.0.0.1 ({@code RESTCatalogServer.start()} listens on every interface). Runs until its stdin
 * closes; prints {@code REST-SERVER-READY} once it serves. Loaded only in the child JVM (its
 * classes are the unshaded iceberg-core's, absent from the tests' classpath).
 */
public final class RestCatalogServerLoopback {

    private RestCatalogServerLoopback() {}

    /**
     * @param args unused; the catalog's properties are the system properties {@code
     *     rest-server.<property>}, the port {@code rest-server.rest.port}
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
        Object catalogServer = ctor.newInstance(config);
        Method init = type.getDeclaredMethod("initializeBackendCatalog");
        init.setAccessible(true);
        Object context = init.invoke(catalogServer);
        Class<?> adapterType = Class.forName("org.apache.iceberg.rest.RESTServerCatalogAdapter");
        Constructor<?> adapterCtor = adapterType.getDeclaredConstructor(context.getClass());
        adapterCtor.setAccessible(true);
        RESTCatalogAdapter adapter = (RESTCatalogAdapter) adapterCtor.newInstance(context);

        ServletContextHandler handler = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
        handler.addServlet(new ServletHolder(new RESTCatalogServlet(adapter)), "/*");
        Server jetty = new Server();
        ServerConnector connector = new ServerConnector(jetty);
        connector.setHost("127.0.0.1");
        connector.setPort(Integer.parseInt(config.get("rest.port")));
        jetty.addConnector(connector);
        jetty.setHandler(handler);
        jetty.start();
        System.out.println("REST-SERVER-READY");
        System.out.flush();
        try {
            while (System.in.read() >= 0) {
                // until the parent closes our stdin
            }
        } catch (IOException e) {
            // the parent is gone
        }
        jetty.stop();
        System.exit(0);
    }
}
