//! Schemas of the configuration kinds that `RenderBlueprint.spec` embeds as well: the Landscaper
//! blueprint (`imports`) and Capact's policy and implementations (`policy`). They sit below
//! `config` so that the functionConfig does not depend on the steps that read them.

pub mod imports;
pub mod policy;
