import java.io.*;
import java.util.*;
import scala.collection.mutable.HashMap;

/**
 * Replicas of the debug line Kafka's controller wrote after every leader election until apache/kafka PR #4075,
 * with kafka.controller at TRACE as Kafka's config/log4j.properties sets it, in its two forms:
 *
 *   "trunk": the 1.0 line before its release (trunk 91517e8 of October 2017, PartitionStateMachine.scala:326):
 *     debug(s"After leader election, leader cache is updated to ${controllerContext.partitionLeadershipInfo}")
 *     with TopicAndPartition.toString = s"$topic-$partition" and the logger's logIdent prefix;
 *   "0.11": the 0.11.0.1 line (PartitionStateMachine.scala:332), which first copied the map:
 *     debug("After leader election, leader cache is updated to %s".format(
 *         controllerContext.partitionLeadershipInfo.map(l => (l._1, l._2))))
 *     with TopicAndPartition.toString = "[%s,%d]".format(topic, partition).
 *
 * Both build the whole cluster's leader cache into one string (LeaderIsrAndControllerEpoch's StringBuilder
 * with isr.mkString) and write it as a log4j 1.2 PatternLayout line ([%d] %p %m (%c)%n) through a writer
 * flushed after every event (FileAppender's immediateFlush; no fsync). The fixed line (PR #4075: one
 * partition's state) is the baseline. Scala 2.13 from pyspark's jars stands in for Kafka's Scala 2.11/2.12.
 *
 * Usage: java -cp .:scala-library.jar ElectionLog OUT_FILE PARTITIONS...   (one line per size:
 *        partitions elections trunk_us_per_election old011_us_per_election fixed_us_per_election)
 */
public class ElectionLog {
  static boolean trunkNames = true;  // which TopicAndPartition.toString the keys use

  static final class TopicAndPartition {
    final String topic; final int partition;
    TopicAndPartition(String t, int p) { topic = t; partition = p; }
    @Override public String toString() {
      return trunkNames ? topic + "-" + partition : String.format("[%s,%d]", topic, partition);
    }
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
  static final String LOG_IDENT = "[PartitionStateMachine controllerId=1] ";

  static void debug(String msg) throws IOException {
    String withIdent = LOG_IDENT + msg;  // Logging.msgWithLogIdent
    StringBuffer line = new StringBuffer(withIdent.length() + 96);
    line.append('[').append(new Date()).append("] DEBUG ").append(withIdent).append(" (kafka.controller.PartitionStateMachine)\n");
    out.write(line.toString());
    out.flush();
  }

  static HashMap<Object, Object> cache;
  static List<Object> keys;

  static long trunk(int elections) throws IOException {
    trunkNames = true;
    long t0 = System.nanoTime();
    for (int e = 0; e < elections; e++)
      debug("After leader election, leader cache is updated to " + cache);
    return System.nanoTime() - t0;
  }

  static long old011(int elections) throws IOException {
    trunkNames = false;
    long t0 = System.nanoTime();
    for (int e = 0; e < elections; e++) {
      HashMap<Object, Object> copy = new HashMap<>();
      scala.collection.Iterator<scala.Tuple2<Object, Object>> it = cache.iterator();
      while (it.hasNext()) { scala.Tuple2<Object, Object> t = it.next(); copy.put(t._1(), t._2()); }
      debug(String.format("After leader election, leader cache is updated to %s", copy));
    }
    return System.nanoTime() - t0;
  }

  static long fixed(int elections) throws IOException {
    trunkNames = true;
    long t0 = System.nanoTime();
    for (int e = 0; e < elections; e++) {
      Object tp = keys.get(e % keys.size());
      debug("After leader election, leader cache for " + tp + " is updated to " + cache.apply(tp));
    }
    return System.nanoTime() - t0;
  }

  public static void main(String[] args) throws Exception {
    out = new OutputStreamWriter(new FileOutputStream(args[0]), "UTF-8");
    for (int a = 1; a < args.length; a++) {
      int n = Integer.parseInt(args[a]);
      cache = new HashMap<>();
      keys = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        scala.collection.immutable.List<Object> isr =
            scala.jdk.javaapi.CollectionConverters.asScala(Arrays.<Object>asList(i % 5, (i + 1) % 5)).toList();
        TopicAndPartition tp = new TopicAndPartition(String.format("topic-%06d", i), 0);
        cache.put(tp, new LeaderIsrAndControllerEpoch(i % 5, isr, 3, 2));
        keys.add(tp);
      }
      int elections = Math.max(10, 1_000_000 / n);  // about a million entries a pass
      long tTrunk = Long.MAX_VALUE, tOld = Long.MAX_VALUE, tFixed = Long.MAX_VALUE;
      for (int pass = 0; pass < 4; pass++) {  // the first pass warms the JIT; the best of the other three
        long a1 = trunk(elections), a2 = old011(elections), a3 = fixed(elections);
        if (pass > 0) { tTrunk = Math.min(tTrunk, a1); tOld = Math.min(tOld, a2); tFixed = Math.min(tFixed, a3); }
      }
      System.out.printf("%d %d %.3f %.3f %.3f%n", n, elections, tTrunk / 1e3 / elections, tOld / 1e3 / elections, tFixed / 1e3 / elections);
    }
    out.close();
  }
}
