package dev.vended.storage.delta;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A barrier across JVMs over a 127.0.0.1 socket: {@link Server} waits until every party said it
 * is ready for a round, then lets them all go; {@link #await(long)} is a party's side. Reads time
 * out after 150 s (a child JVM may take a minute to start on a loaded machine), so a party that
 * died fails the others instead of hanging them.
 */
final class Barrier implements AutoCloseable {

    /** The barrier a child JVM's writes wait at ({@code null}: none). */
    static volatile Barrier current;

    private final Socket socket;
    private final BufferedReader in;
    private final PrintWriter out;

    Barrier(int port) throws IOException {
        socket = new Socket(InetAddress.getLoopbackAddress(), port);
        socket.setSoTimeout(150_000);
        in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        out = new PrintWriter(socket.getOutputStream(), true, StandardCharsets.UTF_8);
    }

    /** Says this party is ready for {@code round} and waits until every party is. */
    void await(long round) throws IOException {
        out.println("ready " + round);
        String answer = in.readLine();
        if (!("go " + round).equals(answer)) {
            throw new IOException("barrier round " + round + ": expected go, got " + answer);
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** The coordinating side: {@code parties} connections, {@code rounds} rounds. */
    static final class Server implements AutoCloseable {
        private final ServerSocket server;

        Server() throws IOException {
            server = new ServerSocket(0, 10, InetAddress.getLoopbackAddress());
            server.setSoTimeout(150_000);
        }

        int port() {
            return server.getLocalPort();
        }

        /** Runs every round to the end: each round releases the parties once all are ready. */
        void run(int parties, long rounds) throws IOException {
            List<Socket> sockets = new ArrayList<>();
            try {
                List<BufferedReader> ins = new ArrayList<>();
                List<PrintWriter> outs = new ArrayList<>();
                for (int i = 0; i < parties; i++) {
                    Socket s = server.accept();
                    s.setSoTimeout(150_000);
                    sockets.add(s);
                    ins.add(new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8)));
                    outs.add(new PrintWriter(s.getOutputStream(), true, StandardCharsets.UTF_8));
                }
                for (long r = 0; r < rounds; r++) {
                    for (BufferedReader in : ins) {
                        String line = in.readLine();
                        if (!("ready " + r).equals(line)) {
                            throw new IOException("round " + r + ": expected ready, got " + line);
                        }
                    }
                    for (PrintWriter out : outs) {
                        out.println("go " + r);
                    }
                }
            } finally {
                for (Socket s : sockets) {
                    s.close();
                }
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }
}
