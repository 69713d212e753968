package dev.vended.storage.hadoop;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.catalog.LanceNamespaceStorageOptionsProvider;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

import org.apache.hadoop.conf.Configuration;

/**
 * The JVM-wide stores of configured tables: one {@link ObjectStore} (and one credential provider)
 * per table configuration per JVM, whichever {@link VendedFileSystem} instance asks, so that a
 * JVM running many tasks makes about one provider call per credential lifetime per table. Stores
 * stay open for the life of the JVM (the native runtime's threads are daemons).
 *
 * <p>Opening a table is single-flight per table per JVM (one store per table). For a Lance table
 * located by its catalog, the describe that locates it is the native one ({@link
 * LanceNamespaceStorageOptionsProvider#describeTable()}): shared by every caller of the process
 * for the same catalog table, and after a failure the native side remembers it for a backoff (the
 * credential refresher's schedule: 1 s doubling to 30 s, 30 s at once when the catalog says the
 * failure is permanent) and answers it at once without calling the catalog; a Unity Catalog
 * table's {@code getTable} is remembered the same way. This class holds no retry policy and no
 * timing: it maps a failure to an {@link IOException} naming the table, and {@link #locate} waits
 * only for a table's first attempt in the JVM, making later ones in the background (cheap during
 * the native backoff, which answers them without calling the catalog).
 */
final class TableStores {

    /** An open table: its store (rooted at the bucket) and its canonical location. */
    record Opened(ObjectStore store, TableConfig.Location location, String providerDescription) {}

    private static final ConcurrentHashMap<String, Holder> HOLDERS = new ConcurrentHashMap<>();

    private TableStores() {}

    /**
     * The store of {@code table}, opened on first use in this JVM; waits for an open in progress.
     *
     * @throws IOException naming the table and the failure, if it cannot be opened now (during the
     *     backoff after a failed describe: that failure, saying when the next attempt is); an
     *     {@link InterruptedIOException} if interrupted
     */
    static Opened get(TableConfig table, Configuration conf, String vendedScheme)
            throws IOException {
        return holder(table).get(table, conf, vendedScheme);
    }

    /**
     * The open table {@code table} (located by its catalog) for routing a path, without waiting
     * for any attempt but the first one of this JVM: the first caller makes the first attempt
     * (bounded by the catalog's timeout) and concurrent callers wait for it; after it failed, a
     * caller gets the last failure at once and, unless an attempt for the table is in flight,
     * starts the next one on a background daemon thread ({@code vended-storage-locate-<table>}: at
     * most one per table at a time) that a later caller finds. During the native backoff such an
     * attempt is answered at once with the remembered failure, without calling the catalog.
     *
     * @throws IOException naming the table and its last failure (the native message, which says
     *     when the next catalog call is, as of that attempt), if it is not open now; an {@link
     *     InterruptedIOException} if interrupted while waiting for the first attempt
     */
    static Opened locate(TableConfig table, Configuration conf, String vendedScheme)
            throws IOException {
        return holder(table).locate(table, conf, vendedScheme);
    }

    /**
     * The store of {@code table} if it is open in this JVM, without opening it.
     *
     * @return the store, or null
     */
    static ObjectStore openStore(TableConfig table) {
        Holder h = HOLDERS.get(table.identity());
        Opened o = h == null ? null : h.opened;
        return o == null ? null : o.store();
    }

    private static Holder holder(TableConfig table) {
        Holder h = HOLDERS.get(table.identity());
        return h != null ? h : HOLDERS.computeIfAbsent(table.identity(), k -> new Holder());
    }

    private static final class Holder {
        private final ReentrantLock lock = new ReentrantLock();
        /** Whether a background attempt is in flight (at most one per table). */
        private final AtomicBoolean background = new AtomicBoolean();
        private volatile Opened opened;
        /** Whether an attempt to open has completed in this JVM (see {@link #locate}). */
        private volatile boolean attempted;
        /** The failure of the last attempt, or null. */
        private volatile IOException failure;

        Opened get(TableConfig table, Configuration conf, String vendedScheme) throws IOException {
            Opened o = opened;
            if (o != null) {
                return o;
            }
            lock(table);
            try {
                if (opened == null) {
                    attempt(table, conf, vendedScheme);
                }
                if (opened != null) {
                    return opened;
                }
                throw unavailable(table);
            } finally {
                lock.unlock();
            }
        }

        Opened locate(TableConfig table, Configuration conf, String vendedScheme)
                throws IOException {
            Opened o = opened;
            if (o != null) {
                return o;
            }
            if (!attempted) {
                lock(table);
                try {
                    if (opened == null && !attempted) {
                        attempt(table, conf, vendedScheme);
                    }
                } finally {
                    lock.unlock();
                }
                o = opened;
                if (o != null) {
                    return o;
                }
            } else if (background.compareAndSet(false, true)) {
                Thread t =
                        new Thread(
                                () -> {
                                    lock.lock();
                                    try {
                                        if (opened == null) {
                                            attempt(table, conf, vendedScheme);
                                        }
                                    } catch (IOException e) {
                                        // interrupted: the next caller starts another attempt
                                    } finally {
                                        lock.unlock();
                                        background.set(false);
                                    }
                                },
                                "vended-storage-locate-" + table.name);
                t.setDaemon(true);
                t.start();
            }
            o = opened;
            if (o != null) {
                return o;
            }
            throw unavailable(table);
        }

        private void lock(TableConfig table) throws InterruptedIOException {
            try {
                lock.lockInterruptibly();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while opening table " + table.name);
            }
        }

        /** One attempt to open, under the lock: sets {@link #opened} or {@link #failure}. */
        private void attempt(TableConfig table, Configuration conf, String vendedScheme)
                throws InterruptedIOException {
            try {
                opened = open(table, conf, vendedScheme);
                failure = null;
            } catch (InterruptedIOException e) {
                throw e;
            } catch (IOException e) {
                failure = e;
            }
            attempted = true;
        }

        /** A fresh exception for the last failure, naming the table (its message as is). */
        private IOException unavailable(TableConfig table) {
            IOException e = failure;
            if (e == null) {
                return new IOException("table '" + table.name + "' is unavailable");
            }
            return new IOException(
                    "table '" + table.name + "' is unavailable: " + e.getMessage(), e);
        }
    }

    /**
     * Checks what can be checked without any call (a catalog token's variable or file), so that
     * a configuration error shows when a FileSystem is initialized.
     *
     * @throws IOException naming the key that is wrong
     */
    static void check(TableConfig table, Configuration conf) throws IOException {
        if (table.catalog != null) {
            CatalogTables.check(table, conf);
        }
    }

    private static Opened open(TableConfig table, Configuration conf, String vendedScheme)
            throws IOException {
        Duration lead = leadTime(table, conf);
        // Every request carries the table's name in its User-Agent (the audit trail).
        Map<String, String> options = AuditAgent.withUserAgent(table.staticOptions(), table.name);
        if (table.catalog != null) {
            return CatalogTables.open(table, conf, vendedScheme, options, lead);
        }
        String providerClass = table.get("provider.class");
        TableConfig.Location loc = TableConfig.Location.parse(table.location, vendedScheme);
        StorageOptionsProvider provider =
                providerClass == null ? null : newProvider(providerClass, table, conf);
        return new Opened(
                ObjectStore.open(loc.bucketUri(), options, provider, lead),
                loc,
                providerClass == null ? "static options" : providerClass);
    }

    private static Duration leadTime(TableConfig table, Configuration conf) {
        if (table.get("lead-time") == null) {
            return null;
        }
        long ms =
                conf.getTimeDuration(
                        TableConfig.key(table.name, "lead-time"), -1L, TimeUnit.MILLISECONDS);
        return ms < 0 ? null : Duration.ofMillis(ms);
    }

    /**
     * Creates the provider: constructor {@code (Configuration, String tableName)}, else a no-arg
     * one. The class is looked up with the thread's context class loader, then this library's
     * loader, then the configuration's (so classes of Spark {@code --jars} are found).
     */
    static StorageOptionsProvider newProvider(String className, TableConfig table, Configuration conf)
            throws IOException {
        Class<?> c = loadClass(className, conf);
        if (!StorageOptionsProvider.class.isAssignableFrom(c)) {
            throw new IOException(
                    TableConfig.key(table.name, "provider.class")
                            + ": "
                            + className
                            + " does not implement "
                            + StorageOptionsProvider.class.getName());
        }
        try {
            Object o;
            try {
                Constructor<?> k = c.getConstructor(Configuration.class, String.class);
                o = k.newInstance(conf, table.name);
            } catch (NoSuchMethodException e) {
                o = c.getConstructor().newInstance();
            }
            return (StorageOptionsProvider) o;
        } catch (NoSuchMethodException e) {
            throw new IOException(
                    className
                            + " needs a public constructor (Configuration, String tableName) or a"
                            + " public no-arg constructor",
                    e);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new IOException(
                    "the constructor of " + className + " failed: " + cause, cause);
        } catch (ReflectiveOperationException e) {
            throw new IOException("cannot create " + className + ": " + e, e);
        }
    }

    static Class<?> loadClass(String className, Configuration conf) throws IOException {
        List<ClassLoader> loaders = new ArrayList<>();
        loaders.add(Thread.currentThread().getContextClassLoader());
        loaders.add(TableStores.class.getClassLoader());
        loaders.add(conf.getClassLoader());
        ClassNotFoundException last = null;
        for (ClassLoader l : loaders) {
            if (l == null) {
                continue;
            }
            try {
                return Class.forName(className, true, l);
            } catch (ClassNotFoundException e) {
                last = e;
            }
        }
        throw new IOException(
                "provider class "
                        + className
                        + " not found by the thread's context class loader, the library's loader"
                        + " or the configuration's loader",
                last);
    }
}
