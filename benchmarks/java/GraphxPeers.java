// GraphX peers for benchmarks/graph_peers.py.
//
// Python cannot hand Scala functions to GraphX through the Py4J gateway, and mapping the
// DataFrame's rows in Python would start Python workers and measure them instead of GraphX.
// So the few functions GraphX needs (Row -> Edge, and Pregel's vprog/sendMsg/mergeMsg for
// weighted SSSP) live here as small serializable Java classes. graph_peers.py compiles this
// file with javac against pyspark's own jars into a cache directory, jars it, and adds the
// jar to the session; it is never built by the project's packaging.
//
// Every entry point takes the edge Dataset exactly as prepared by graph_peers.py -- columns
// (src long, dst long, w long) in this order -- and returns a Dataset<Row> (id long, value)
// with one row per vertex, already materialized by an eager localCheckpoint, so the Python
// side computes the same summary aggregate for the GraphX and the DataFrame peers. The
// GraphX graphs are unpersisted before returning, so runs in one session don't pile up cache.

package sparklog_bench;

import java.io.Serializable;
import java.util.Collections;

import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.Function;
import org.apache.spark.graphx.Edge;
import org.apache.spark.graphx.EdgeDirection;
import org.apache.spark.graphx.EdgeTriplet;
import org.apache.spark.graphx.Graph;
import org.apache.spark.graphx.Pregel;
import org.apache.spark.graphx.lib.ConnectedComponents;
import org.apache.spark.graphx.lib.PageRank;
import org.apache.spark.graphx.lib.ShortestPaths;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;
import scala.Option;
import scala.Tuple2;
import scala.collection.Iterator;
import scala.collection.Iterator$;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractFunction1;
import scala.runtime.AbstractFunction2;
import scala.runtime.AbstractFunction3;

public final class GraphxPeers {
    /** "Unreached" distance for the Pregel SSSP; never added to (sendMsg checks first). */
    public static final long INF = Long.MAX_VALUE;

    private GraphxPeers() {}

    // Scala's ClassTag.Long / ClassTag.Double: GraphX then stores attributes in primitive
    // arrays, as it does for a Scala caller writing Graph[Long, Long].
    private static ClassTag<Object> longTag() { return ClassTag$.MODULE$.Long(); }
    private static ClassTag<Object> doubleTag() { return ClassTag$.MODULE$.Double(); }

    // ---------------------------------------------------------------------------------
    // graph construction: Row -> Edge in the JVM, no Python worker
    // ---------------------------------------------------------------------------------

    static final class RowToEdge implements Function<Row, Edge<Object>> {
        private static final long serialVersionUID = 1L;
        @Override public Edge<Object> call(Row r) {
            return new Edge<Object>(r.getLong(0), r.getLong(1), (Object) r.getLong(2));
        }
    }

    /** Graph[Long, Long] over (src, dst, w); vertices are the ids in either column. */
    static Graph<Object, Object> graph(Dataset<Row> edges, long defaultVertex) {
        JavaRDD<Edge<Object>> e = edges.toJavaRDD().map(new RowToEdge());
        return Graph.fromEdges(e.rdd(), (Object) defaultVertex,
                StorageLevel.MEMORY_ONLY(), StorageLevel.MEMORY_ONLY(), longTag(), longTag());
    }

    /** Vertex attribute as a boxed Long/Double, or null (unreached); see {@link #vertices}. */
    static final class VertexToRow implements Function<Tuple2<Object, Object>, Row> {
        private static final long serialVersionUID = 1L;
        private final long landmark;  // >= 0: the attribute is a ShortestPaths SPMap
        private final boolean infIsNull;
        VertexToRow(long landmark, boolean infIsNull) {
            this.landmark = landmark;
            this.infIsNull = infIsNull;
        }
        @Override public Row call(Tuple2<Object, Object> v) {
            Object value = v._2();
            if (landmark >= 0) {
                @SuppressWarnings("unchecked")
                Option<Object> d = ((scala.collection.Map<Object, Object>) value).get(landmark);
                value = d.isDefined() ? (Object) Long.valueOf(((Number) d.get()).longValue()) : null;
            } else if (infIsNull && value instanceof Long && (Long) value == INF) {
                value = null;
            }
            return RowFactory.create(v._1(), value);
        }
    }

    /** The graph's vertices as an eagerly materialized Dataset (id long, value TYPE). */
    static Dataset<Row> vertices(Dataset<Row> edges, Graph<?, ?> g, DataType type,
                                 long landmark, boolean infIsNull) {
        StructType schema = new StructType()
                .add("id", DataTypes.LongType, false)
                .add("value", type, true);
        @SuppressWarnings({"unchecked", "rawtypes"})
        JavaRDD<Tuple2<Object, Object>> vs = (JavaRDD) g.vertices().toJavaRDD();
        JavaRDD<Row> rows = vs.map(new VertexToRow(landmark, infIsNull));
        return edges.sparkSession().createDataFrame(rows, schema).localCheckpoint();
    }

    // ---------------------------------------------------------------------------------
    // 1. connected components: lib.ConnectedComponents (messages both ways = undirected)
    // ---------------------------------------------------------------------------------

    public static Dataset<Row> connectedComponents(Dataset<Row> edges, int maxIter) {
        Graph<Object, Object> g = graph(edges, 0L);
        Graph<Object, Object> cc = ConnectedComponents.run(g, maxIter, longTag(), longTag());
        Dataset<Row> out = vertices(edges, cc, DataTypes.LongType, -1L, false);
        cc.unpersist(false);
        g.unpersist(false);
        return out;
    }

    // ---------------------------------------------------------------------------------
    // 2. weighted SSSP: Pregel with vprog = min, sendMsg = dist + w if smaller, merge = min
    // ---------------------------------------------------------------------------------

    /** vprog: the source is pinned to 0 (so the graph needs no mapVertices), else min. */
    static final class MinVprog extends AbstractFunction3<Object, Object, Object, Object>
            implements Serializable {
        private static final long serialVersionUID = 1L;
        private final long source;
        MinVprog(long source) { this.source = source; }
        @Override public Object apply(Object id, Object dist, Object msg) {
            if ((Long) id == source) return 0L;
            return Math.min((Long) dist, (Long) msg);
        }
    }

    static final class RelaxSend
            extends AbstractFunction1<EdgeTriplet<Object, Object>, Iterator<Tuple2<Object, Object>>>
            implements Serializable {
        private static final long serialVersionUID = 1L;
        @Override public Iterator<Tuple2<Object, Object>> apply(EdgeTriplet<Object, Object> t) {
            long d = (Long) t.srcAttr();
            if (d != INF) {
                long nd = d + (Long) t.attr();
                if (nd < (Long) t.dstAttr()) {
                    return Iterator$.MODULE$.single(new Tuple2<Object, Object>(t.dstId(), nd));
                }
            }
            return Iterator$.MODULE$.empty();
        }
    }

    static final class MinMerge extends AbstractFunction2<Object, Object, Object>
            implements Serializable {
        private static final long serialVersionUID = 1L;
        @Override public Object apply(Object a, Object b) {
            return Math.min((Long) a, (Long) b);
        }
    }

    /**
     * Weighted SSSP from {@code source}. activeDirection = Out: after the first superstep only
     * the out-edges of vertices whose distance just dropped send messages (semi-naive).
     */
    public static Dataset<Row> ssspPregel(Dataset<Row> edges, long source, int maxIter) {
        Graph<Object, Object> g = graph(edges, INF);
        Graph<Object, Object> dist = Pregel.apply(g, (Object) INF, maxIter, EdgeDirection.Out(),
                new MinVprog(source), new RelaxSend(), new MinMerge(),
                longTag(), longTag(), longTag());
        Dataset<Row> out = vertices(edges, dist, DataTypes.LongType, -1L, true);
        dist.unpersist(false);
        g.unpersist(false);
        return out;
    }

    // ---------------------------------------------------------------------------------
    // 3. BFS hops: lib.ShortestPaths on the REVERSED graph
    // ---------------------------------------------------------------------------------

    /**
     * lib.ShortestPaths sends messages from dst to src: it computes each vertex's hop distance
     * TO the landmarks. On the reversed graph that is the distance FROM {@code source}.
     */
    public static Dataset<Row> bfsShortestPaths(Dataset<Row> edges, long source) {
        Graph<Object, Object> g = graph(edges, 0L);
        Graph<Object, Object> rev = g.reverse();
        scala.collection.immutable.Seq<Object> landmarks =
                CollectionConverters.asScala(Collections.singletonList((Object) source)).toSeq();
        Graph<scala.collection.Map<Object, Object>, Object> sp =
                ShortestPaths.run(rev, landmarks, longTag());
        Dataset<Row> out = vertices(edges, sp, DataTypes.LongType, source, false);
        sp.unpersist(false);
        rev.unpersist(false);
        g.unpersist(false);
        return out;
    }

    // ---------------------------------------------------------------------------------
    // 4. PageRank: lib.PageRank.run (static, numIter supersteps)
    // ---------------------------------------------------------------------------------

    /**
     * lib.PageRank.run(graph, numIter, resetProb): ranks start at 1.0, each iteration sets
     * rank = resetProb + (1 - resetProb) * sum(in-neighbour rank / outdeg), so the mass of
     * dangling vertices is dropped every round; at the end the ranks are rescaled to sum to the
     * number of vertices (SPARK-18847). The caller divides by that sum to compare.
     */
    public static Dataset<Row> pageRank(Dataset<Row> edges, int numIter, double resetProb) {
        Graph<Object, Object> g = graph(edges, 0L);
        Graph<Object, Object> pr = PageRank.run(g, numIter, resetProb, longTag(), longTag());
        Dataset<Row> out = vertices(edges, pr, DataTypes.DoubleType, -1L, false);
        pr.unpersist(false);
        g.unpersist(false);
        return out;
    }
}
