"""Function secret sharing: AES PRG, DPF, DCF and FSS gates on shared ring values.

Modules, bottom up (a lower one never imports a higher one):

- :mod:`fss.prg`   fixed-key AES length-doubling PRG (MMO + orthomorphism), batched
- :mod:`fss.dpf`   distributed point functions (BGI CCS 2016), Z_2^l or XOR outputs
- :mod:`fss.dcf`   distributed comparison functions (Boyle et al. EUROCRYPT 2021)
- :mod:`fss.gates` masked-input FSS gates on additive shares with a trusted
  dealer (TCC 2019): less_than, greater_than, equal, sign, abs_value,
  in_interval, for two parties or an edge of k > 2 members

Depends only on :mod:`mpc` (ring, rng, session, dealer, network, beaver).
"""
