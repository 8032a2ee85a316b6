#pragma once

#include "types.h"

#include <QString>

#include <cstdint>
#include <vector>

namespace attnlab {

enum class ProjectionKind {
    Orthogonal,  // blocks of d orthogonal rows (Performer's default; lower variance)
    Iid,         // independent Gaussian rows
    Simplex,     // blocks of d rows along the vertices of a randomly rotated simplex (SimRFs)
};

// Every projection, in the order menus list them.
const std::vector<ProjectionKind>& projectionKinds();

enum class RowNorm {
    Chi,    // each row as long as a fresh Gaussian d-vector: rows are then marginally N(0, I_d)
    SqrtD,  // every row of length sqrt(d) (Performer's "regularised" variant)
};

// The random projection W in R^{m x d} (rows w_1..w_m) of the random-feature maps.
//
// Orthogonal: ceil(m / d) blocks of d rows. Each block is Q^T where G = Q R is the Householder QR
// decomposition of a d x d matrix G of N(0, 1) entries, with the columns of Q multiplied by
// sign(diag R): that makes the factorisation unique and Q uniformly (Haar) distributed, so the
// rows of a block are orthonormal and uniformly oriented. The last block is truncated when d does
// not divide m. Row i is then scaled to |g_i| for a fresh g_i ~ N(0, I_d) (RowNorm::Chi) or to
// sqrt(d) (RowNorm::SqrtD).
// Iid: rows w_i ~ N(0, I_d); with RowNorm::SqrtD each is rescaled to length sqrt(d).
// Simplex (Reid et al., "Simplex Random Features", ICML 2023): as orthogonal, but row r of a
// block is s_r rotated by the block's Haar rotation (the block is S Q^T), where s_r =
// (e_r - 1/d) / sqrt(1 - 1/d): d unit vectors with pairwise dot products -1/(d - 1), the
// vertices of a regular simplex, which pull the directions further apart than orthogonal rows
// do. Rows are then scaled as orthogonal rows are. (Any regular simplex serves: Q is Haar, so a
// fixed rotation of S gives the same distribution.) With d = 1 there is no simplex: the rows
// are those of orthogonal.
//
// Deterministic in (seed, substream): computed in double with IEEE operations in a fixed order, so
// the same seed gives the same W bit for bit on every machine and build. Polls throwIfCancelled()
// (cancellation.h) between blocks, so that a huge m can be stopped.
MatrixD randomProjection(int m, int d, ProjectionKind kind, RowNorm rowNorm, std::uint64_t seed,
                         std::uint64_t substream = 0);

QString projectionKindName(ProjectionKind kind);  // "orthogonal", "iid", "simplex"
QString rowNormName(RowNorm norm);                // "chi", "sqrt-d"
bool parseProjectionKind(const QString& name, ProjectionKind* kind);
bool parseRowNorm(const QString& name, RowNorm* norm);

}  // namespace attnlab
