import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;

/**
 * Embedded Neo4j Community DBMS with a Bolt connector on 127.0.0.1:PORT, for dev and CI.
 *
 * <pre>java [flags] -cp 'target/classes:target/lib/*' Launcher HOME PORT</pre>
 *
 * Auth is off unless NEO4J_PASSWORD (at least 8 characters) is set; then user "neo4j" has that password.
 * -Dneo4j.pagecache=256m sets the page cache. An optional HOME/neo4j.conf adds settings (strictly validated).
 * Prints "READY bolt://127.0.0.1:PORT" once the "neo4j" database is available. SIGTERM/SIGINT shut down
 * cleanly. With NEO4J_EXIT_ON_STDIN_EOF=1 the JVM also exits (cleanly) when its stdin reaches EOF,
 * i.e. when the parent process that holds the pipe dies.
 */
public final class Launcher {
  public static void main(String[] args) {
    try {
      run(args);
    } catch (Throwable t) { // Neo4j's non-daemon threads would otherwise keep a failed JVM alive
      t.printStackTrace();
      System.exit(1);
    }
  }

  private static void run(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: Launcher <home> <boltPort>");
      System.exit(2);
    }
    Path home = Path.of(args[0]).toAbsolutePath();
    SocketAddress bolt = new SocketAddress("127.0.0.1", Integer.parseInt(args[1]));
    String password = System.getenv("NEO4J_PASSWORD");
    boolean auth = password != null && !password.isEmpty();

    DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home)
        .setConfig(BoltConnector.enabled, true)
        .setConfig(BoltConnector.listen_address, bolt)
        .setConfig(BoltConnector.advertised_address, bolt) // default :7687 would leak into routing tables
        .setConfig(HttpConnector.enabled, false)
        .setConfig(HttpsConnector.enabled, false)
        .setConfig(GraphDatabaseSettings.auth_enabled, auth)
        .setConfig(GraphDatabaseSettings.pagecache_memory,
            ByteUnit.parse(System.getProperty("neo4j.pagecache", "256m")))
        .setConfig(GraphDatabaseSettings.keep_logical_logs, "false") // keep only what recovery needs
        .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
        .setConfig(GraphDatabaseSettings.udc_enabled, false) // no usage reports (no internet anyway)
        // internal: the Bolt server otherwise idles 2 x 5 s in Netty's shutdown quiet period
        .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0);
    Path conf = home.resolve("neo4j.conf");
    if (Files.exists(conf)) {
      builder.loadPropertiesFromFile(conf);
    }

    DatabaseManagementService dbms = builder.build();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      dbms.shutdown();
      System.out.println("STOPPED");
      System.out.flush();
    }, "neo4j-shutdown"));

    if (auth) {
      dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
          "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
    }
    if (!dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME).isAvailable(120_000)) {
      System.err.println("database 'neo4j' did not become available");
      System.exit(1); // the shutdown hook stops the DBMS
    }
    if ("1".equals(System.getenv("NEO4J_EXIT_ON_STDIN_EOF"))) {
      Thread watchdog = new Thread(() -> {
        try {
          while (System.in.read() != -1) { /* discard */ }
        } catch (Exception ignored) {
          // a broken stdin means the parent is gone, too
        }
        System.exit(0);
      }, "stdin-eof-watchdog");
      watchdog.setDaemon(true);
      watchdog.start();
    }
    System.out.println("READY bolt://" + bolt);
    System.out.flush();
    Thread.currentThread().join(); // the JVM exits via a signal (or the watchdog) and the shutdown hook
  }
}
