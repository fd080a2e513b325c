#!/usr/bin/python3
"""Writes KafkaSpout offsets into ZooKeeper exactly as legacy storm-kafka did.

Stands in for the offsets a Storm cluster left behind, so a migration can be
rehearsed: {root}/{id}/partition_{N} holding storm-kafka's JSON. Uses kazoo,
an independent ZooKeeper client (Debian: python3-kazoo, run with /usr/bin/python3).

  seed-offsets.py --zk 127.0.0.1:2181 --root /kafka-offsets --id sentence-counter \
      --topic sentences --offsets 0=150,1=120

Against a ZooKeeper with digest ACLs (a `tempest dev` cluster's), it
authenticates with the "user:password" line of --auth-file, or of the file
$TEMPEST_ZK_AUTH_FILE names (`tempest dev` prints that export).
"""
import argparse
import json
import os
import sys

from kazoo.client import KazooClient
from kazoo.security import CREATOR_ALL_ACL


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zk", required=True, help="ZooKeeper connect string")
    parser.add_argument("--root", required=True, help="SpoutConfig zkRoot")
    parser.add_argument("--id", required=True, help="SpoutConfig id")
    parser.add_argument("--topic", required=True)
    parser.add_argument("--offsets", required=True, help="PARTITION=OFFSET[,PARTITION=OFFSET...]")
    parser.add_argument("--topology-id", default="legacy-pipeline-3-1500000000",
                        help="the Storm topology id recorded with the offsets")
    parser.add_argument("--auth-file", default=os.environ.get("TEMPEST_ZK_AUTH_FILE", ""),
                        help="file whose first line is the digest user:password")
    args = parser.parse_args()

    auth_data = []
    if args.auth_file:
        with open(args.auth_file) as f:
            auth_data = [("digest", f.readline().strip())]
    # Nodes it creates stay with the identity, as the spout's own do.
    zk = KazooClient(hosts=args.zk, auth_data=auth_data,
                     default_acl=CREATOR_ALL_ACL if auth_data else None)
    zk.start(timeout=20)
    try:
        for item in args.offsets.split(","):
            partition, offset = (int(x) for x in item.split("="))
            node = {
                "topology": {"id": args.topology_id, "name": args.topology_id.split("-")[0]},
                "offset": offset,
                "partition": partition,
                "broker": {"host": "storm-kafka-broker", "port": 9092},
                "topic": args.topic,
            }
            path = "%s/%s/partition_%d" % (args.root.rstrip("/"), args.id, partition)
            data = json.dumps(node).encode()
            if zk.exists(path):
                zk.set(path, data)
            else:
                zk.create(path, data, makepath=True)
            print("%s = %s" % (path, data.decode()))
    finally:
        zk.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
