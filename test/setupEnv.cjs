// Node 20 is supported here; silence the AWS SDK's notice about its future Node 22 floor.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
