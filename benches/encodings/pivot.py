#!/usr/bin/env python3
"""Block rates of a `portcullis replay --results` file of generate.py's requests: zone by
encoding, then category by encoding."""
import json,sys,collections
res=sys.argv[1]
z=collections.defaultdict(lambda:[0,0]); e=collections.defaultdict(lambda:[0,0]); ze=collections.defaultdict(lambda:[0,0]); ce=collections.defaultdict(lambda:[0,0])
out=collections.Counter()
for l in open(res):
    r=json.loads(l)
    zone,enc=r['source'].split('/')
    b= r['outcome']=='blocked'
    out[r['outcome']]+=1
    for d,k in ((z,zone),(e,enc),(ze,(zone,enc)),(ce,(r['category'],enc))):
        d[k][0]+=b; d[k][1]+=1
print(out)
encs=sorted(e)
print('%-12s'%'zone'+''.join('%9s'%x[:8] for x in encs)+'      all')
for k in sorted(z):
    print('%-12s'%k+''.join('%8.1f%%'%(100*ze[(k,x)][0]/ze[(k,x)][1]) for x in encs)+'%8.1f%%'%(100*z[k][0]/z[k][1]))
print('%-12s'%'all'+''.join('%8.1f%%'%(100*e[x][0]/e[x][1]) for x in encs))
cats=sorted(set(c for c,_ in ce))
print()
for c in cats:
    print('%-14s'%c+''.join('%8.1f%%'%(100*ce[(c,x)][0]/max(1,ce[(c,x)][1])) for x in encs))
