import sys, time, json, urllib.request
from sparklog.spark import session
from sparklog import Engine
n = int(sys.argv[1]); strategy = sys.argv[2]; reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
spark = session.start("local[2]", partitions=2, conf={"spark.ui.enabled": "true"})
sc = spark.sparkContext
prog = (".decl edge(x:number, y:number)\n.decl tc(x:number, y:number)\n"
        "tc(x, y) :- edge(x, y).\ntc(x, y) :- tc(x, z), tc(z, y).\n")
edges = spark.createDataFrame([(i, i + 1) for i in range(n)], "x long, y long")
eng = Engine(spark, strategy=strategy)
def stages():
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages?status=complete"
    return json.load(urllib.request.urlopen(url))
for r in range(reps):
    before = {s["stageId"] for s in stages()}
    t = time.perf_counter()
    res = eng.run(prog, {"edge": edges})
    sz = res.size("tc")
    el = time.perf_counter() - t
    rel = [s for s in res._stats if s["relation"].startswith("tc@") or s["relation"] == "tc"] if hasattr(res, "_stats") else []
    print(f"run {r}: {el:.2f} s, tc={sz}")
    rounds = [(s["iteration"], s["delta"], s["seconds"]) for s in getattr(res, "stats", [])] 
    print("  rounds", [(i, d, round(x, 3)) for i, d, x in rounds])
if len(sys.argv) > 4:
    new = [s for s in stages() if s["stageId"] not in before]
    new.sort(key=lambda s: s["stageId"])
    for s in new:
        print(s["stageId"], s["name"][:40], s["numTasks"], s["executorRunTime"], "ms run", s.get("inputRecords"), s.get("shuffleReadRecords"), s.get("shuffleWriteRecords"), s["submissionTime"][11:23], s["completionTime"][11:23])
if len(sys.argv) > 5:
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/sql?details=true&planDescription=true&length=10000"
    sqls = json.load(urllib.request.urlopen(url))
    sqls.sort(key=lambda q: q["duration"], reverse=True)
    for q in sqls[:int(sys.argv[5])]:
        print("=== sql", q["id"], q["duration"], "ms", q["description"][:60])
        print(q["planDescription"][:3000])
        for nd in q["nodes"]:
            ms = [f'{m["name"]}={m["value"]}' for m in nd["metrics"] if "time" in m["name"] or "rows" in m["name"]]
            print("   ", nd["nodeId"], nd["nodeName"], "; ".join(ms)[:300])
