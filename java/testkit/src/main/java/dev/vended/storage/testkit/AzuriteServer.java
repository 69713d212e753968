package dev.vended.storage.testkit;

import dev.vended.storage.StorageOptionsProvider;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Azurite's blob service (in memory, telemetry off) from {@code .tools/azurite} (see {@link
 * EmulatorProcess#toolsDirectory()}), which enforces SAS signatures and the SAS expiry {@code se}
 * (403, no grace). Mints account SAS tokens for Azurite's public development account with
 * javax.crypto, and vends them through {@link SasProvider}.
 */
public final class AzuriteServer implements AutoCloseable {

    /** Azurite's well-known development account (public, emulator only). */
    public static final String ACCOUNT = "devstoreaccount1";

    /**
     * Azurite's well-known development key (public, emulator only:
     * https://learn.microsoft.com/en-us/azure/storage/common/storage-use-azurite).
     */
    public static final String KEY =
            "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

    /** The installed Azurite blob launcher, relative to the tools directory. */
    public static final String TOOL = "azurite/node_modules/.bin/azurite-blob";

    private static final String SAS_VERSION = "2021-08-06";
    private static final HttpClient HTTP =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private final EmulatorProcess process;

    private AzuriteServer(EmulatorProcess process) {
        this.process = process;
    }

    /**
     * Starts Azurite from {@link EmulatorProcess#tool(String)} ({@link #TOOL}).
     *
     * @return the running server; {@link #close()} stops it
     * @throws IOException if it is not installed or does not start within 30 s
     */
    public static AzuriteServer start() throws IOException {
        return start(EmulatorProcess.tool(TOOL));
    }

    /**
     * Starts the {@code azurite-blob} launcher {@code bin} on 127.0.0.1, a free port, in memory.
     *
     * @param bin path of the {@code azurite-blob} launcher
     * @return the running server; {@link #close()} stops it
     * @throws IOException if it does not start within 30 s
     */
    public static AzuriteServer start(Path bin) throws IOException {
        int port = EmulatorProcess.freePort();
        return new AzuriteServer(
                EmulatorProcess.spawn(
                        List.of(
                                bin.toString(),
                                "--blobHost", "127.0.0.1",
                                "--blobPort", Integer.toString(port),
                                "--inMemoryPersistence", "--skipApiVersionCheck", "--loose",
                                "--disableTelemetry"),
                        port,
                        "successfully listens on"));
    }

    /**
     * Base URL of the blob service (the account name goes in the path).
     *
     * @return {@code http://127.0.0.1:PORT}, without a trailing slash
     */
    public String url() {
        return process.url();
    }

    /**
     * How long Azurite took to listen.
     *
     * @return the time from spawning the process to its "listening" line
     */
    public Duration startedIn() {
        return process.startedIn();
    }

    /**
     * The options locating Azurite at {@code endpoint} (this server's {@link #url()} or a proxy in
     * front of it): {@code azure_storage_use_emulator}, {@code azure_storage_endpoint}, {@code
     * azure_storage_account_name}, plus {@code credentials}.
     *
     * @param endpoint the blob service's base URL, {@code http://127.0.0.1:PORT}
     * @param credentials credential options to add, such as those of {@link SasProvider#vend}
     * @return a new mutable map
     */
    public static Map<String, String> storeOptions(String endpoint, Map<String, String> credentials) {
        Map<String, String> o = new HashMap<>();
        o.put("azure_storage_use_emulator", "true");
        o.put("azure_storage_endpoint", endpoint);
        o.put("azure_storage_account_name", ACCOUNT);
        o.putAll(credentials);
        return o;
    }

    /**
     * An account SAS for the dev account (blob service; service, container and object resources;
     * read/write/delete/list/add/create) expiring at {@code expiresAtMillis} (epoch ms) rounded
     * down to the second, signed as in
     * https://learn.microsoft.com/en-us/rest/api/storageservices/create-account-sas (version
     * 2021-08-06).
     *
     * @param expiresAtMillis the expiry ({@code se}), epoch milliseconds
     * @param badSignature whether to sign with a wrong key (Azurite then answers 403)
     * @return the SAS query string ({@code sv=...&sig=...}, URL-encoded values, no leading
     *     {@code ?}), as {@code azure_storage_sas_token} takes it
     */
    public static String accountSas(long expiresAtMillis, boolean badSignature) {
        String se = expiry(expiresAtMillis);
        String sp = "rwdlac";
        String ss = "b";
        String srt = "sco";
        String spr = "https,http";
        String toSign =
                ACCOUNT + "\n" + sp + "\n" + ss + "\n" + srt + "\n\n" + se + "\n\n" + spr + "\n"
                        + SAS_VERSION + "\n\n";
        String sig = sign(toSign, badSignature);
        return "sv=" + enc(SAS_VERSION) + "&ss=" + enc(ss) + "&srt=" + enc(srt) + "&sp=" + enc(sp)
                + "&se=" + enc(se) + "&spr=" + enc(spr) + "&sig=" + enc(sig);
    }

    /**
     * A service SAS for the whole of {@code container} ({@code sr=c}; read, add, create, write,
     * delete, list), version 2018-11-09, expiring at {@code expiresAtMillis} (epoch ms) rounded
     * down to the second, signed as in
     * https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas.
     *
     * <p>Needed where Azurite 3.35.0 refuses an account SAS: a container's Blob Batch ({@code POST
     * ?restype=container&comp=batch}, used by multi-key deletes, e.g. Lance's cleanup) has no
     * entry in its account-SAS permission table, so it answers a bodiless 500.
     *
     * @param container the container's name
     * @param expiresAtMillis the expiry ({@code se}), epoch milliseconds
     * @return the SAS query string ({@code sv=...&sig=...}, URL-encoded values, no leading
     *     {@code ?})
     */
    public static String containerSas(String container, long expiresAtMillis) {
        String se = expiry(expiresAtMillis);
        String sp = "racwdl";
        String spr = "https,http";
        String sv = "2018-11-09";
        String toSign =
                sp + "\n\n" + se + "\n/blob/" + ACCOUNT + "/" + container + "\n\n\n" + spr + "\n" + sv
                        + "\nc\n\n\n\n\n\n";
        return "sv=" + enc(sv) + "&sr=c&sp=" + enc(sp) + "&se=" + enc(se) + "&spr=" + enc(spr)
                + "&sig=" + enc(sign(toSign, false));
    }

    private static String expiry(long expiresAtMillis) {
        return DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss'Z'")
                .withZone(ZoneOffset.UTC)
                .format(Instant.ofEpochMilli(expiresAtMillis));
    }

    /** Base64 HMAC-SHA256 of {@code toSign} with the dev key (a wrong key if {@code bad}). */
    private static String sign(String toSign, boolean bad) {
        byte[] key = Base64.getDecoder().decode(KEY);
        if (bad) {
            key[0] ^= (byte) 0xff;
        }
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return Base64.getEncoder()
                    .encodeToString(mac.doFinal(toSign.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    /**
     * The expiry of a SAS living about {@code ttl} from now, rounded down to the whole second (as
     * {@code se} has it), so that {@code expires_at_millis} matches the token exactly.
     *
     * @param ttl the lifetime
     * @return the expiry, epoch milliseconds, a multiple of 1000
     */
    public static long sasExpiry(Duration ttl) {
        return (System.currentTimeMillis() + ttl.toMillis()) / 1000 * 1000;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /**
     * Creates {@code container} with a one-minute account SAS.
     *
     * @param container the container's name
     * @throws IOException if Azurite cannot be reached or does not answer 2xx (also when the
     *     thread is interrupted, with the interrupt flag set again)
     */
    public void createContainer(String container) throws IOException {
        String sas = accountSas(System.currentTimeMillis() + 60_000, false);
        HttpResponse<String> r;
        try {
            r = HTTP.send(
                    HttpRequest.newBuilder(
                                    URI.create(
                                            url() + "/" + ACCOUNT + "/" + container
                                                    + "?restype=container&" + sas))
                            .header("x-ms-version", SAS_VERSION)
                            .PUT(HttpRequest.BodyPublishers.noBody())
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted creating container " + container, e);
        }
        if (r.statusCode() / 100 != 2) {
            throw new IOException("create container " + container + ": HTTP " + r.statusCode());
        }
    }

    /**
     * Vends account SAS tokens living {@code ttl} (whole seconds) under {@code
     * azure_storage_sas_token} with {@code expires_at_millis}; counts calls and keeps each
     * signature (for leak checks).
     */
    public static final class SasProvider implements StorageOptionsProvider {
        private final Duration ttl;
        private final AtomicInteger calls = new AtomicInteger();
        private final List<String> signatures = new CopyOnWriteArrayList<>();

        /**
         * A provider of SAS tokens living {@code ttl}.
         *
         * @param ttl each token's lifetime, rounded down to the whole second
         */
        public SasProvider(Duration ttl) {
            this.ttl = ttl;
        }

        /**
         * One credential set, not counted as a call (its signature is kept).
         *
         * @param badSignature whether to sign with a wrong key, as in {@link #accountSas}
         * @return a new mutable map of {@code azure_storage_sas_token} and {@code
         *     expires_at_millis} (epoch milliseconds, decimal)
         */
        public Map<String, String> vend(boolean badSignature) {
            long expires = sasExpiry(ttl);
            String sas = accountSas(expires, badSignature);
            signatures.add(sas.substring(sas.indexOf("sig=") + 4));
            Map<String, String> o = new HashMap<>();
            o.put("azure_storage_sas_token", sas);
            o.put("expires_at_millis", Long.toString(expires));
            return o;
        }

        /**
         * Times {@link #fetchStorageOptions()} was called.
         *
         * @return the number of calls so far ({@link #vend(boolean)} not counted)
         */
        public int calls() {
            return calls.get();
        }

        /**
         * The signatures of every SAS vended so far, for checking that none leaks.
         *
         * @return an immutable copy of the URL-encoded {@code sig} values, oldest first
         */
        public List<String> signatures() {
            return List.copyOf(signatures);
        }

        @Override
        public Map<String, String> fetchStorageOptions() {
            calls.incrementAndGet();
            return vend(false);
        }

        @Override
        public String toString() {
            return "SasProvider{ttl=" + ttl + ", calls=" + calls.get() + "}";
        }
    }

    /** Stops Azurite (its data is in memory and gone). */
    @Override
    public void close() {
        process.close();
    }

    @Override
    public String toString() {
        return "AzuriteServer{" + url() + "}";
    }
}
