package dev.vended.storage.testing;

import dev.vended.storage.ObjectStore;

/**
 * Child-JVM entry point of {@code NativeLoaderTest}: loads the native library as the JVM's
 * arguments say and prints {@code LOADED <version>}, or {@code FAILED <error>} and exits 1.
 */
public final class NativeLoaderMain {
    private NativeLoaderMain() {}

    /**
     * @param args ignored
     */
    public static void main(String[] args) {
        try {
            System.out.println("LOADED " + ObjectStore.nativeVersion());
        } catch (UnsatisfiedLinkError e) {
            System.out.println("FAILED " + e);
            System.exit(1);
        }
    }
}
