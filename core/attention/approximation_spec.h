#pragma once

#include "attention/methods.h"
#include "attention/projection.h"

#include <QString>

#include <cstdint>
#include <map>
#include <memory>

namespace attnlab {

struct FittedFeatureMaps;

// Where a head sits: its layer in a model and its query head. An input that is not a model's
// (random embeddings, .npy, random rows) is layer 0. Every method is made for a site: random draws
// depend on the head alone (head h of every layer draws the same W, the W the single-layer views
// show), fitted parameters (hedgehog) on both.
struct HeadSite {
    int layer = 0;
    int head = 0;
};

// An approximation and its parameters: the method, m, the random projection W's coupling, row
// norms and seed, and the value of every other parameter the registry names (absent: its
// default), so a new method's parameter needs no new field here.
struct ApproximationSpec {
    Method kind = Method::FavorPositive;                   // an approximation (not an exact method)
    int features = int(featuresParameter().defaultValue);  // m
    ProjectionKind projection = ProjectionKind::Orthogonal;
    RowNorm rowNorm = RowNorm::Chi;
    std::uint64_t seed = 0;            // fixes W and every other random draw
    std::map<QString, double> values;  // by MethodParameter::field
    // The fitted feature maps of the methods fitted to a model (MethodInfo::needsFittedMaps:
    // hedgehog, hedgehog-window); null when none are loaded.
    std::shared_ptr<const FittedFeatureMaps> fittedMaps;

    // The value of `parameter` (features included), or its default.
    double value(const MethodParameter& parameter) const;
    void setValue(const MethodParameter& parameter, double value);
    bool isOn(const MethodParameter& parameter) const { return value(parameter) != 0; }
    // The method's title with its size, as figures and pages name it: "FAVOR+ positive, m = 64",
    // "Local window, w = 32" (the symbol that ends the size parameter's label); the title alone
    // for a method without a size.
    QString titleWithSize() const;
};

}  // namespace attnlab
