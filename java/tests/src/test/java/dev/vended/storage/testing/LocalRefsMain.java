package dev.vended.storage.testing;

import java.util.List;

/**
 * Child-JVM entry point of the local-reference test: {@code LocalRefsMain ENDPOINT BUCKET}; runs
 * {@link LocalRefsScenario} and prints {@code LOCAL-REFS-OK}.
 */
public final class LocalRefsMain {
    private LocalRefsMain() {}

    /**
     * @param args endpoint, bucket
     */
    public static void main(String[] args) throws Exception {
        List<String> big = LocalRefsScenario.bigMap(args[0], args[1], 10_000);
        System.out.println("big map fetched on " + big);
        List<String> threads = LocalRefsScenario.consecutiveRefreshes(args[0], args[1], 200);
        System.out.println(
                "200 provider calls on " + threads.stream().distinct().toList() + " threads");
        System.out.println("LOCAL-REFS-OK");
    }
}
