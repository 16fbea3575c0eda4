import java.io.*;
import java.util.*;
import scala.collection.mutable.HashMap;

/**
 * A replica of the debug line Kafka's controller wrote after every leader election until apache/kafka PR #4075
 * (KAFKA-6116), with kafka.controller at TRACE as 1.0's config/log4j.properties sets it:
 *
 *   debug("After leader election, leader cache is updated to %s".format(
 *       controllerContext.partitionLeadershipInfo.map(l => (l._1, l._2))))
 *
 * the whole cluster's leader cache copied into a new map and turned into one string (TopicAndPartition's
 * "[%s,%d]".format, LeaderIsrAndControllerEpoch's StringBuilder with isr.mkString), then written as a log4j
 * 1.2 PatternLayout line through a writer flushed after every event (FileAppender's immediateFlush). The
 * fixed line (PR #4075) logs one partition's state: the baseline. Scala 2.13 from pyspark's jars stands in
 * for 1.0's Scala 2.11/2.12; the file goes to the page cache (no fsync, as log4j 1.2 does none).
 *
 * Usage: java -cp .:scala-library.jar ElectionLog OUT_FILE PARTITIONS...  (prints one line per size)
 */
public class ElectionLog {
  static final class TopicAndPartition {
    final String topic; final int partition;
    TopicAndPartition(String t, int p) { topic = t; partition = p; }
    @Override public String toString() { return String.format("[%s,%d]", topic, partition); }
    @Override public int hashCode() { return topic.hashCode() * 31 + partition; }
    @Override public boolean equals(Object o) {
      return o instanceof TopicAndPartition && ((TopicAndPartition) o).topic.equals(topic) && ((TopicAndPartition) o).partition == partition;
    }
  }

  static final class LeaderIsrAndControllerEpoch {
    final int leader, leaderEpoch, controllerEpoch; final scala.collection.immutable.List<Object> isr;
    LeaderIsrAndControllerEpoch(int l, scala.collection.immutable.List<Object> isr, int le, int ce) {
      leader = l; this.isr = isr; leaderEpoch = le; controllerEpoch = ce;
    }
    @Override public String toString() {
      StringBuilder sb = new StringBuilder();
      sb.append("(Leader:" + leader);
      sb.append(",ISR:" + isr.mkString(","));
      sb.append(",LeaderEpoch:" + leaderEpoch);
      sb.append(",ControllerEpoch:" + controllerEpoch + ")");
      return sb.toString();
    }
  }

  static Writer out;

  static void log(String msg) throws IOException {
    StringBuffer line = new StringBuffer(msg.length() + 96);
    line.append('[').append(new Date()).append("] DEBUG ").append(msg).append(" (kafka.controller.PartitionStateMachine)\n");
    out.write(line.toString());
    out.flush();
  }

  public static void main(String[] args) throws Exception {
    out = new OutputStreamWriter(new FileOutputStream(args[0]), "UTF-8");
    for (int a = 1; a < args.length; a++) {
      int n = Integer.parseInt(args[a]);
      HashMap<Object, Object> cache = new HashMap<>();
      List<Object> keys = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        scala.collection.immutable.List<Object> isr =
            scala.jdk.javaapi.CollectionConverters.asScala(Arrays.<Object>asList(i % 5, (i + 1) % 5)).toList();
        TopicAndPartition tp = new TopicAndPartition(String.format("topic-%06d", i), 0);
        cache.put(tp, new LeaderIsrAndControllerEpoch(i % 5, isr, 3, 2));
        keys.add(tp);
      }
      // about 5 s of old lines per size: enough elections to time, the first pass warming the JIT
      int elections = Math.max(20, 2_500_000 / n);
      double oldUs = 0, newUs = 0;
      for (int pass = 0; pass < 2; pass++) {
        long t0 = System.nanoTime();
        for (int e = 0; e < elections; e++) {
          HashMap<Object, Object> copy = new HashMap<>();
          scala.collection.Iterator<scala.Tuple2<Object, Object>> it = cache.iterator();
          while (it.hasNext()) { scala.Tuple2<Object, Object> t = it.next(); copy.put(t._1(), t._2()); }
          log(String.format("After leader election, leader cache is updated to %s", copy));
        }
        long t1 = System.nanoTime();
        for (int e = 0; e < elections; e++) {
          Object tp = keys.get(e % n);
          log(String.format("After leader election, leader cache for %s is updated to %s", tp, cache.apply(tp)));
        }
        long t2 = System.nanoTime();
        oldUs = (t1 - t0) / 1e3 / elections;
        newUs = (t2 - t1) / 1e3 / elections;
      }
      System.out.printf("%d %d %.3f %.3f%n", n, elections, oldUs, newUs);
    }
    out.close();
  }
}
