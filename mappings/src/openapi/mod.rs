//! OpenAPI → OTC: documents (Swagger 2.0, OpenAPI 3.0, 3.1) become tools and request plans.

mod plan;

pub use plan::{
    BodyKind, BodyPlan, BodySource, CredentialPlacement, CredentialSource, CredentialUse,
    ParamLocation, ParamPlan, ParamStyle, RequestPlan,
};
