import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A single-node Apache Kafka (KRaft, combined broker + controller) for dev and CI.
 *
 * <pre>java [flags] -cp 'target/classes:target/lib/*' KafkaLauncher SERVER_PROPERTIES CLUSTER_ID</pre>
 *
 * Formats the log directories named by SERVER_PROPERTIES (kafka.tools.StorageTool format, skipped for a
 * directory already formatted) and then runs kafka.Kafka on the same file, both in this one JVM (one JVM
 * start instead of two). SIGTERM/SIGINT shut the server down cleanly (Kafka's own shutdown hook). With
 * KAFKA_EXIT_ON_STDIN_EOF=1 the JVM also exits (cleanly) when its stdin reaches EOF, i.e. when the
 * parent process that holds the pipe dies, even by SIGKILL.
 */
public final class KafkaLauncher {
  public static void main(String[] args) {
    if (args.length != 2) {
      System.err.println("usage: KafkaLauncher <server.properties> <cluster-id>");
      System.exit(2);
    }
    try {
      format(args[0], args[1]);
    } catch (Throwable t) { // Scala/Kafka threads must not keep a failed JVM alive
      t.printStackTrace();
      System.exit(1);
    }
    if ("1".equals(System.getenv("KAFKA_EXIT_ON_STDIN_EOF"))) {
      Thread watchdog = new Thread(() -> {
        try {
          while (System.in.read() != -1) { /* discard */ }
        } catch (Exception ignored) {
          // a broken stdin means the parent is gone, too
        }
        System.exit(0); // runs Kafka's shutdown hook
      }, "stdin-eof-watchdog");
      watchdog.setDaemon(true);
      watchdog.start();
    }
    kafka.Kafka.main(new String[] {args[0]}); // returns only through System.exit
  }

  private static void format(String properties, String clusterId) {
    if (!Files.isReadable(Path.of(properties))) {
      throw new IllegalArgumentException("cannot read " + properties);
    }
    PrintStream out = System.out;
    int code = kafka.tools.StorageTool.execute(
        new String[] {"format", "--cluster-id", clusterId, "--config", properties, "--ignore-formatted"}, out);
    if (code != 0) {
      System.err.println("kafka.tools.StorageTool format exited with " + code);
      System.exit(code);
    }
    out.println("FORMATTED " + clusterId);
    out.flush();
  }
}
