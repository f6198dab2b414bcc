"""Every family, registered explicitly, one line each (in the order listed by
:data:`~evalframe.measures.FAMILIES`).  A new measure is a ``Family`` in the
module of its kind and one line here."""
from __future__ import annotations

__all__ = ["REGISTRY"]

from . import ap, cascade, compat, cutoff, cwl, dcg, diversity, rank, sets
from .base import REGISTRY

# the spec's measures
REGISTRY.register(cutoff.PRECISION)
REGISTRY.register(cutoff.RECALL)
REGISTRY.register(cutoff.SUCCESS)
REGISTRY.register(rank.RECIP_RANK)
REGISTRY.register(ap.AVERAGE_PRECISION)
REGISTRY.register(ap.R_PREC)
REGISTRY.register(dcg.NDCG)
REGISTRY.register(rank.BPREF)
REGISTRY.register(cutoff.JUDGED)
REGISTRY.register(sets.NUM_RET)
REGISTRY.register(sets.NUM_REL)
REGISTRY.register(sets.NUM_REL_RET)
# trec_eval's other measures
REGISTRY.register(ap.IPREC)
REGISTRY.register(ap.IPREC_AVG)
REGISTRY.register(ap.GM_AP)
REGISTRY.register(rank.GM_BPREF)
REGISTRY.register(ap.INF_AP)
REGISTRY.register(sets.UTILITY)
REGISTRY.register(sets.SET_P)
REGISTRY.register(sets.SET_R)
REGISTRY.register(sets.SET_REL_P)
REGISTRY.register(sets.SET_AP)
REGISTRY.register(sets.SET_F)
REGISTRY.register(sets.NUM_NONREL_JUDGED_RET)
REGISTRY.register(cutoff.RELATIVE_P)
REGISTRY.register(cutoff.UNJUDGED)
REGISTRY.register(dcg.BIN_G)
REGISTRY.register(dcg.G)
REGISTRY.register(dcg.NDCG_REL)
REGISTRY.register(dcg.R_NDCG)
REGISTRY.register(dcg.RBP)
# other evaluators' measures (ir_measures' names)
REGISTRY.register(cascade.ERR)
REGISTRY.register(cascade.NERR)
REGISTRY.register(dcg.DCG_FAMILY)
REGISTRY.register(cwl.SDCG)
REGISTRY.register(cwl.INST)
REGISTRY.register(cwl.INSQ)
REGISTRY.register(compat.COMPAT)
# diversity (intent-aware) measures, ndeval's (ir_measures' names)
REGISTRY.register(diversity.ALPHA_DCG)
REGISTRY.register(diversity.ALPHA_NDCG)
REGISTRY.register(diversity.ERR_IA)
REGISTRY.register(diversity.NERR_IA)
REGISTRY.register(diversity.NRBP)
REGISTRY.register(diversity.NNRBP)
REGISTRY.register(diversity.AP_IA)
REGISTRY.register(diversity.P_IA)
REGISTRY.register(diversity.ST_RECALL)
